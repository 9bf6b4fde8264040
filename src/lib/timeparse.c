// SPDX-License-Identifier: GPL-2.0-only
/* Points in time of query parameters: see timeparse.h. */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "lib/timeconst.h"
#include "lib/timeparse.h"

#define MAX_SEC 9223372035ULL /* the last whole second that fits uint64_t nanoseconds, rounded */

/* Up to 9 digits of a fraction at *s (after the point) as nanoseconds. */
static int fraction(const char **s, uint64_t *ns)
{
	uint64_t scale = NSEC_PER_SEC / 10;
	int n = 0;

	*ns = 0;
	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	for (; isdigit((unsigned char)**s); (*s)++, n++)
		if (n < 9) {
			*ns += (uint64_t)(**s - '0') * scale;
			scale /= 10;
		}
	return 0;
}

/* n digits at *s as a number. */
static int digits(const char **s, int n, int *out)
{
	*out = 0;
	for (int i = 0; i < n; i++, (*s)++) {
		if (!isdigit((unsigned char)**s))
			return -EINVAL;
		*out = *out * 10 + (**s - '0');
	}
	return 0;
}

static int rfc3339(const char *s, uint64_t *ns)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	uint64_t frac = 0;
	long long t;

	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
	    digits(&s, 2, &d) || (*s != 'T' && *s != 't' && *s != ' ') || !*s++ ||
	    digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' ||
	    digits(&s, 2, &sec))
		return -EINVAL;
	if (*s == '.') {
		s++;
		if (fraction(&s, &frac))
			return -EINVAL;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '+' ? 1 : -1;
		if (digits(&s, 2, &oh) || *s++ != ':' || digits(&s, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	tm = (struct tm){ .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			  .tm_min = mi, .tm_sec = sec };
	t = (long long)timegm(&tm);
	/* timegm normalises 31 February into March: a date that moved was not a date. */
	if (tm.tm_mday != d || tm.tm_mon != mo - 1)
		return -EINVAL;
	t -= sign * (oh * 3600LL + om * 60LL);
	if (t < 0 || (unsigned long long)t > MAX_SEC)
		return -EINVAL;
	*ns = (uint64_t)t * NSEC_PER_SEC + frac;
	return 0;
}

int time__parse(const char *s, uint64_t *ns)
{
	const char *p = s;
	uint64_t sec = 0, frac = 0;

	if (!s || !*s)
		return -EINVAL;
	if (strchr(s, '-') || strchr(s, ':'))
		return rfc3339(s, ns);
	for (; isdigit((unsigned char)*p); p++) {
		sec = sec * 10 + (uint64_t)(*p - '0');
		if (sec > MAX_SEC)
			return -EINVAL;
	}
	if (p == s)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (fraction(&p, &frac))
			return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	*ns = sec * NSEC_PER_SEC + frac;
	return 0;
}
