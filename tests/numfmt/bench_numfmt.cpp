/*
 * bench_numfmt.cpp - ns per number: std::to_chars (what numfmt.cpp called)
 * against numfmt.c, on the value mixes a reply carries.
 *
 * Each mix is COUNT values formatted one after another into one buffer with
 * a comma between them, as encode_tensor.c does; the median of RUNS runs is
 * shown. bench_numfmt [count] [runs]
 */
#include "server/json/numfmt.h"
#include "tests/numfmt/random_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace
{

constexpr size_t DEFAULT_COUNT = 1000000; /* ~2 MiB of doubles per mix */
constexpr int DEFAULT_RUNS = 7;

double now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

template <typename T, typename F>
double median_ns(const std::vector<T> &values, std::vector<char> &out, int runs,
                 F format)
{
    std::vector<double> per_number;
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        char *dst = out.data();
        for (T v : values) {
            dst += format(v, dst);
            *dst++ = ',';
        }
        double t1 = now_ns();
        if (dst == out.data()) /* keeps the loop's result alive */
            std::abort();
        per_number.push_back((t1 - t0) / double(values.size()));
    }
    std::sort(per_number.begin(), per_number.end());
    return per_number[per_number.size() / 2];
}

template <typename T>
void row(const char *name, const std::vector<T> &values, int runs)
{
    std::vector<char> out(values.size() * (NUMFMT_MAX + 1) + NUMFMT_MAX);
    double stdlib = median_ns(values, out, runs, [](T v, char *dst) {
        return size_t(std::to_chars(dst, dst + NUMFMT_MAX, v).ptr - dst);
    });
    double ours;
    size_t bytes = 0;
    if constexpr (sizeof(T) == sizeof(double))
        ours = median_ns(values, out, runs, numfmt_double);
    else
        ours = median_ns(values, out, runs, numfmt_float);
    char tmp[NUMFMT_MAX];
    for (T v : values)
        bytes += sizeof(T) == sizeof(double) ? numfmt_double(double(v), tmp)
                                             : numfmt_float(float(v), tmp);
    std::printf("| %-28s | %5.1f | %14.1f | %8.1f | %7.2fx |\n", name,
                double(bytes) / double(values.size()), stdlib, ours,
                stdlib / ours);
}

} // namespace

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 0;
    int runs = argc > 2 ? std::atoi(argv[2]) : 0;
    if (count == 0)
        count = DEFAULT_COUNT;
    if (runs <= 0)
        runs = DEFAULT_RUNS;
    rng r{42};
    std::vector<double> softmax(count), gaussian(count), bits(count);
    std::vector<float> gaussian_f(count);
    for (size_t i = 0; i < count; i++) {
        softmax[i] = 0.02 * r.uniform();
        gaussian[i] = r.gaussian();
        gaussian_f[i] = float(r.gaussian());
        do {
            uint64_t b = r.next();
            std::memcpy(&bits[i], &b, sizeof b);
        } while (!std::isfinite(bits[i]));
    }
    std::printf("numfmt: median of %d runs over %zu numbers each, ns per "
                "number\n\n",
                runs, count);
    std::printf("| %-28s | bytes | std::to_chars | numfmt.c | speed-up |\n",
                "values");
    std::printf("|------------------------------|-------|---------------|-----"
                "-----|----------|\n");
    row("uniform(0, 0.02) doubles", softmax, runs);
    row("N(0,1) doubles", gaussian, runs);
    row("random-bit doubles (finite)", bits, runs);
    row("N(0,1) floats", gaussian_f, runs);
    return 0;
}
