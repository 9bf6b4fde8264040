// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/otlp_headers.h"

/* RFC 9110 5.6.2 token characters. */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int read_all(const char *path, char **out, char *why, size_t why_size)
{
	size_t len = 0;
	char *text;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot read \"%s\": %s", path, strerror(errno));
		return err;
	}
	text = malloc(OTLP_HEADERS_FILE_MAX + 1);
	if (!text) {
		snprintf(why, why_size, "out of memory");
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, text + len, OTLP_HEADERS_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			snprintf(why, why_size, "cannot read \"%s\": %s", path, strerror(errno));
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
		if (len > OTLP_HEADERS_FILE_MAX) {
			err = -EFBIG;
			snprintf(why, why_size, "\"%s\" is larger than %d bytes", path,
				 OTLP_HEADERS_FILE_MAX);
			goto fail;
		}
	}
	close(fd);
	text[len] = '\0';
	if (strlen(text) != len) {
		snprintf(why, why_size, "\"%s\" holds a NUL byte", path);
		free(text);
		return -EINVAL;
	}
	*out = text;
	return 0;
fail:
	close(fd);
	free(text);
	return err;
}

/* Splits one line in place into name and value; false when it is not "Name: value". */
static bool parse_line(char *line, struct otlp_header *h)
{
	char *p = line, *colon, *end;

	while (is_tchar(*p))
		p++;
	if (p == line || *p != ':')
		return false;
	colon = p;
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = '\0';
	/* Control characters would let a value end the header early or smuggle in another. */
	for (char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return false;
	*colon = '\0';
	*h = (struct otlp_header){ line, p };
	return true;
}

int otlp_headers__read_file(const char *path, char **text, struct otlp_header **hdrs, size_t *nr,
			    char *why, size_t why_size)
{
	struct otlp_header *list = NULL, *grown;
	char *buf = NULL, *line, *next;
	unsigned int lineno = 0;
	size_t n = 0;
	int err;

	err = read_all(path, &buf, why, why_size);
	if (err)
		return err;
	for (line = buf; line; line = next) {
		struct otlp_header h;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (!line[strspn(line, " \t\r")] || line[0] == '#')
			continue;
		if (!parse_line(line, &h)) {
			snprintf(why, why_size, "\"%s\" line %u: want \"Name: value\"", path, lineno);
			err = -EINVAL;
			goto fail;
		}
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			snprintf(why, why_size, "out of memory");
			err = -ENOMEM;
			goto fail;
		}
		list = grown;
		list[n++] = h;
	}
	*text = buf;
	*hdrs = list;
	*nr = n;
	return 0;
fail:
	free(list);
	free(buf);
	return err;
}
