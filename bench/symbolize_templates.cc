// SPDX-License-Identifier: GPL-2.0-only
/*
 * A C++ program for bench/symbolize.sh: KCOUNT instantiations of a pipeline over the standard
 * containers and algorithms (sort, stable_sort, map, set, unordered_map, std::function, lambdas,
 * ostringstream, shared_ptr), so that its -O2 -g build holds thousands of template functions
 * with deep inline chains and long demangled names. Built by bench/bench.mk.
 */
#ifndef KCOUNT
#define KCOUNT 40
#endif
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace bench {
template <int N> struct Item {
	long key;
	double weight[N % 5 + 1];
	std::string name;
	bool operator<(const Item &o) const { return key < o.key || (key == o.key && name < o.name); }
};

template <int N> struct Hash {
	size_t operator()(const Item<N> &i) const { return std::hash<long>()(i.key) ^ std::hash<std::string>()(i.name); }
};
template <int N> bool operator==(const Item<N> &a, const Item<N> &b) { return a.key == b.key && a.name == b.name; }

template <int N> class Pipeline {
public:
	explicit Pipeline(unsigned seed) : seed_(seed) {}
	std::vector<Item<N>> make(size_t n) {
		std::vector<Item<N>> v(n);
		for (auto &i : v) {
			seed_ = seed_ * 1103515245u + 12345u;
			i.key = seed_ % 1000;
			for (auto &w : i.weight) w = seed_ / 7.0;
			i.name = std::to_string(seed_ % 97);
		}
		return v;
	}
	long run(size_t n) {
		auto v = make(n);
		std::sort(v.begin(), v.end());
		std::stable_sort(v.begin(), v.end(), [](const Item<N> &a, const Item<N> &b) { return a.weight[0] > b.weight[0]; });
		std::map<std::string, std::vector<Item<N>>> by_name;
		std::set<Item<N>> uniq(v.begin(), v.end());
		std::unordered_map<Item<N>, int, Hash<N>> counts;
		for (const auto &i : v) {
			by_name[i.name].push_back(i);
			counts[i]++;
		}
		std::function<long(const Item<N> &)> f = [this](const Item<N> &i) { return i.key * (N + 1) + (long)seed_; };
		long total = std::accumulate(v.begin(), v.end(), 0L, [&](long acc, const Item<N> &i) { return acc + f(i); });
		std::ostringstream os;
		for (const auto &kv : by_name) os << kv.first << kv.second.size();
		auto p = std::make_shared<std::vector<Item<N>>>(uniq.begin(), uniq.end());
		return total + (long)os.str().size() + (long)counts.size() + (long)p->size();
	}
private:
	unsigned seed_;
};

template <int... Ns> long run_all(std::integer_sequence<int, Ns...>, size_t n) {
	long t = 0;
	((t += Pipeline<Ns>(Ns + 1).run(n)), ...);
	return t;
}
} // namespace bench

int main(int argc, char **argv) {
	(void)argv;
	std::printf("%ld\n", bench::run_all(std::make_integer_sequence<int, KCOUNT>(), (size_t)argc * 100));
	return 0;
}
