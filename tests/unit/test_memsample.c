/* DEPS: src/memory/memsample.c src/memory/memtarget.c src/lib/json.c src/lib/buf.c */
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory profiling's pure logic: sampling intervals and scaling (a simulation of the BPF
 * countdown), target parsing/matching.
 */
#include <math.h>

#include "src/memory/memsample.h"
#include "src/memory/memtarget.h"
#include "testlib.h"

#define SHIFT 16
#define TABLE 1024

TEST(exp_table_mean_and_shape)
{
	uint32_t t[TABLE];
	double sum = 0;

	memsample__exp_table(t, TABLE, SHIFT);
	for (int i = 0; i < TABLE; i++) {
		sum += t[i];
		if (i)
			CHECK(t[i] <= t[i - 1]);
	}
	CHECK(fabs(sum / TABLE / (1 << SHIFT) - 1.0) < 1e-3);
	/* the median of an exponential is ln 2 of its mean */
	CHECK(fabs((t[TABLE / 2 - 1] + t[TABLE / 2]) / 2.0 / (1 << SHIFT) - log(2)) < 0.01);
}

TEST(scale_like_go)
{
	uint64_t o, b;
	double objs = 0;

	memsample__scale(100, 1, 0.5, &o, &b);
	CHECK_EQ(o, 1);
	CHECK_EQ(b, 100);
	memsample__scale(64 * 1024, 512 * 1024, 0.99, &o, &b);
	CHECK_EQ(b, (uint64_t)(65536 / (1 - exp(-0.125)) + 0.5));
	CHECK_EQ(o, 8); /* 8.51 rounded down when u >= 0.51 */
	memsample__scale(64 * 1024, 512 * 1024, 0.2, &o, &b);
	CHECK_EQ(o, 9);
	for (int i = 0; i < 1000; i++) {
		memsample__scale(64 * 1024, 64 * 1024, (i + 0.5) / 1000, &o, &b);
		objs += o;
	}
	CHECK(fabs(objs / 1000 - 1 / (1 - exp(-1.0))) < 0.01);
}

/* The BPF countdown, simulated: the scaled samples estimate the true totals. */
static void simulate(uint64_t mean, uint64_t size, long count, double *est_objs, double *est_bytes)
{
	static uint32_t t[TABLE];
	int64_t until;
	uint64_t o, b;

	memsample__exp_table(t, TABLE, SHIFT);
	srand48(42);
	until = (int64_t)((mean * t[lrand48() & (TABLE - 1)]) >> SHIFT);
	*est_objs = *est_bytes = 0;
	for (long i = 0; i < count; i++) {
		until -= (int64_t)size;
		if (until > 0)
			continue;
		until = (int64_t)((mean * t[lrand48() & (TABLE - 1)]) >> SHIFT);
		memsample__scale(size, mean, drand48(), &o, &b);
		*est_objs += o;
		*est_bytes += b;
	}
}

TEST(sampling_estimates_totals)
{
	double o, b;

	simulate(512 * 1024, 256, 4000000, &o, &b);
	CHECK(fabs(o / 4000000 - 1) < 0.03);
	CHECK(fabs(b / (4000000.0 * 256) - 1) < 0.03);
	simulate(512 * 1024, 64 * 1024, 40000, &o, &b);
	CHECK(fabs(o / 40000 - 1) < 0.03);
	CHECK(fabs(b / (40000.0 * 65536) - 1) < 0.03);
	simulate(1, 1000, 1000, &o, &b);
	CHECK_EQ((long long)o, 1000);
}

TEST(target_parse)
{
	struct memtarget_spec s;
	char why[256];

	CHECK_EQ(memtarget__parse("{\"pid\": 123}", &s, why, sizeof(why)), 0);
	CHECK_EQ(s.pid, 123);
	CHECK_EQ(memtarget__parse(" { \"exe\" : \"nginx*\" } \n", &s, why, sizeof(why)), 0);
	CHECK_STR(s.pattern, "nginx*");
	CHECK_EQ(s.pid, 0);
	static const char *const bad[] = { "", "{}", "[1]", "{\"pid\": 0}", "{\"pid\": -1}",
					   "{\"pid\": \"1\"}", "{\"pid\": 99999999999}",
					   "{\"exe\": \"\"}", "{\"exe\": \"/bin/x\"}", "{\"exe\": 3}",
					   "{\"cgroup\": \"x\"}", "{\"pid\": 1} x", "{\"pid\": 1,}",
					   "{\"exe\": \"a\\qb\"}", "{\"pid\": 12" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (memtarget__parse(bad[i], &s, why, sizeof(why)) != -EINVAL || !why[0]) {
			FAILF("accepted %s", bad[i]);
			return;
		}
	}
}

/* Hybrid (this VM: v1 controllers, v2 at .../unified) and unified (Debian's default) layouts. */
static const char mountinfo[] =
	"22 1 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"36 31 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup "
	"rw,cpu,cpuacct\n"
	"40 31 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
static const char mountinfo_v2[] =
	"22 1 8:1 / / rw,relatime - ext4 /dev/vda rw\n"
	"31 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	"50 22 0:26 /kubepods /host/pods rw - cgroup2 cgroup2 rw\n";

TEST(cgroup_resolve_and_match)
{
	struct memcg cg;
	char why[256];

	CHECK_EQ(memcg__resolve(mountinfo, "/sys/fs/cgroup/unified/app/", &cg, why, sizeof(why)), 0);
	CHECK(cg.v2);
	CHECK_STR(cg.dir, "/sys/fs/cgroup/unified/app");
	CHECK_STR(cg.rel, "/app");
	CHECK(memcg__match(&cg, "4:memory:/x\n0::/app\n"));
	CHECK(memcg__match(&cg, "0::/app/sub/leaf\n"));
	CHECK(!memcg__match(&cg, "0::/apple\n"));
	CHECK(!memcg__match(&cg, "4:memory:/app\n0::/\n"));
	CHECK(!memcg__match(&cg, ""));
	/* a v1 hierarchy: the line of its controllers */
	CHECK_EQ(memcg__resolve(mountinfo, "/sys/fs/cgroup/memory/app", &cg, why, sizeof(why)), 0);
	CHECK(!cg.v2);
	CHECK_STR(cg.rel, "/app");
	CHECK(memcg__match(&cg, "5:cpu,cpuacct:/\n4:memory:/app/x\n0::/\n"));
	CHECK(!memcg__match(&cg, "5:cpu,cpuacct:/app\n4:memory:/\n0::/app\n"));
	CHECK_EQ(memcg__resolve(mountinfo, "/sys/fs/cgroup/cpu,cpuacct", &cg, why, sizeof(why)), 0);
	CHECK_STR(cg.rel, "/");
	CHECK(memcg__match(&cg, "5:cpu,cpuacct:/any\n"));
	CHECK(!memcg__match(&cg, "4:memory:/any\n"));
	/* the unified root, and a bind mount of a subtree */
	CHECK_EQ(memcg__resolve(mountinfo_v2, "/sys/fs/cgroup", &cg, why, sizeof(why)), 0);
	CHECK_STR(cg.rel, "/");
	CHECK(memcg__match(&cg, "0::/system.slice/x.service\n"));
	CHECK_EQ(memcg__resolve(mountinfo_v2, "/host/pods/pod1", &cg, why, sizeof(why)), 0);
	CHECK_STR(cg.rel, "/kubepods/pod1");
	CHECK(memcg__match(&cg, "0::/kubepods/pod1/c1\n"));
	/* not under a cgroup file system, or not a plain absolute path */
	CHECK_EQ(memcg__resolve(mountinfo, "/sys/fs/cgroup/unknown", &cg, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "cgroup"));
	CHECK_EQ(memcg__resolve(mountinfo, "app", &cg, why, sizeof(why)), -ENOENT);
	CHECK_EQ(memcg__resolve(mountinfo, "/sys/fs/cgroup/unified/../x", &cg, why, sizeof(why)),
		 -ENOENT);
}

TEST(target_parse_config)
{
	struct memtarget_spec s;
	char why[256];

	CHECK_EQ(memtarget__parse_config("nginx*", &s, why, sizeof(why)), 0);
	CHECK_STR(s.pattern, "nginx*");
	CHECK(!s.is_cgroup);
	CHECK_EQ(memtarget__parse_config("/usr/bin/x", &s, why, sizeof(why)), -EINVAL);
	CHECK_EQ(memtarget__parse_config("cgroup:/nonexistent-autoprof", &s, why, sizeof(why)),
		 -EINVAL);
	CHECK(strstr(why, "cgroup"));
}

TEST(target_match)
{
	CHECK(memtarget__match("nginx", "nginx"));
	CHECK(memtarget__match("ngin*", "nginx"));
	CHECK(memtarget__match("mem_?eak", "mem_leak"));
	CHECK(memtarget__match("*", "anything"));
	CHECK(!memtarget__match("nginx", "nginx2"));
	CHECK(!memtarget__match("*", ""));
	CHECK(!memtarget__match("x", NULL));
}

int main(void)
{
	RUN(exp_table_mean_and_shape);
	RUN(scale_like_go);
	RUN(sampling_estimates_totals);
	RUN(target_parse);
	RUN(target_match);
	RUN(cgroup_resolve_and_match);
	RUN(target_parse_config);
	return test_summary();
}
