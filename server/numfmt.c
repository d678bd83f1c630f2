/*
 * numfmt.c - shortest round-trip number formatting (Schubfach).
 *
 * A finite value v = c * 2^q (c its integer significand) is written as the
 * shortest decimal digits * 10^exp that reads back to v; if several are that
 * short, the one nearest to v (ties: even digits).  The algorithm is
 * Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020; the
 * one behind Java 19's Double.toString), in three passes and no loops:
 *   pass 1: the rounding interval R of v (every real that reads back as v)
 *           is 2^q wide (3/4 of that below a power of two); k is chosen
 *           with 10^k <= width(R) < 10^(k+1), so R holds at least one
 *           multiple of 10^k and at most one of 10^(k+1);
 *   pass 2: v and the two ends of R, times 10^-k, to two fractional bits
 *           and a sticky bit: one multiplication each by a power of ten
 *           from numfmt_table.h ("round to odd": comparisons with the
 *           candidates below are then exact);
 *   pass 3: the multiple of 10^(k+1) in R if there is one, else the
 *           multiple of 10^k in R nearest to v.
 * Java's version also keeps two digits at least (it tries 10^(k+1) only
 * when there are three or more); we try it always, as Ryu does, so that
 * 1e-323 is written rather than 9.9e-324 (both one digit after stripping).
 *
 * The digits are then written two at a time from a table and laid out as
 * C++17's std::to_chars(first, last, value) does (libstdc++, which this file
 * replaced at about 2.5 times the speed): fixed or scientific notation,
 * whichever is shorter, fixed on a tie; the exponent with its sign and at
 * least two digits ("1e+22", "1e-07"); "-0" for negative zero.  One rule of
 * ours on top: a whole number of 2^53 or more (float: 2^24) printed in fixed
 * notation looks like an integer literal that overflows int64 in many JSON
 * parsers (jansson's default mode refuses it; Python reads an int), so such
 * values are written in exponent form, still shortest, e.g.
 * 1.2344567890123457e+20.
 *
 * tests/numfmt compares every output with std::to_chars byte for byte.
 */
#include "numfmt.h"

#include "numfmt_table.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* GCC and Clang's 128-bit integer: one 64x64->128 multiply instruction. */
typedef unsigned __int128 u128;

/* A decimal value: digits * 10^exp, digits > 0. */
typedef struct {
    uint64_t digits;
    int exp;
} decimal;

/* ---- exact integer logarithms ------------------------------------------ */
/* Fixed-point approximations, checked exact over every exponent they meet
 * (q in [-1074, 971], e in [-400, 400]) by gen_numfmt_table.py; >> of a
 * negative int is an arithmetic shift on every compiler we build with. */

/* floor(log10(2^q)) */
static inline int floor_log10_pow2(int q) { return (q * 315653) >> 20; }

/* floor(log10(3/4 * 2^q)) */
static inline int floor_log10_three_quarters_pow2(int q)
{
    return (q * 315653 - 131237) >> 20;
}

/* floor(log2(10^e)) */
static inline int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }

/* ---- pass 2: multiplication with round to odd ------------------------- */

/* floor(g * cp / 2^128), its bit 0 set when the product of cp with the
 * exact power of ten g stands for is not a whole number.  g exceeds that
 * power by less than one unit and cp < 2^59, so the error stays below
 * 2^-69 and only the 64 bits under the point decide the sticky bit. */
static inline uint64_t round_to_odd_64(const uint64_t g[2], uint64_t cp)
{
    u128 low = (u128)g[1] * cp;
    u128 high = (u128)g[0] * cp + (uint64_t)(low >> 64);
    return (uint64_t)(high >> 64) | ((uint64_t)high != 0);
}

/* The same for floats: floor(g * cp / 2^64), cp < 2^30, error < 2^-34;
 * the 32 bits under the point decide the sticky bit. */
static inline uint32_t round_to_odd_32(uint64_t g, uint32_t cp)
{
    u128 p = (u128)g * cp;
    return (uint32_t)(p >> 64) | ((uint32_t)(p >> 32) != 0);
}

/* ---- passes 1 to 3 ----------------------------------------------------- */
/* In both functions below everything is counted in units of 2^(q-2) times
 * 10^-k: v is cb = 4c, R's ends are cbl and cbr, halfway to the neighbours
 * (the lower one a quarter below a power of two: "irregular"), closed when
 * c is even (a reader rounds a tie to the even significand, that is to v). */

#define SCHUBFACH_PASS3(uint, vb, lower, upper, k)                             \
    do {                                                                       \
        const uint s = (vb) >> 2;                                              \
        const uint sp = s / 10;                                                \
        const bool upin = (lower) <= 40 * sp;                                  \
        const bool wpin = 40 * sp + 40 <= (upper);                             \
        if (upin != wpin)                                                      \
            return (decimal){upin ? sp : sp + 1, (k) + 1};                     \
        const uint t = s + 1;                                                  \
        const bool uin = (lower) <= 4 * s;                                     \
        const bool win = 4 * t <= (upper);                                     \
        if (uin != win)                                                        \
            return (decimal){uin ? s : t, (k)};                                \
        const uint mid = 4 * s + 2;                                            \
        const bool round_up = (vb) > mid || ((vb) == mid && (s & 1));          \
        return (decimal){round_up ? t : s, (k)};                               \
    } while (0)

static decimal shortest_double(uint64_t c, int q, bool irregular)
{
    const uint64_t open = c & 1;
    const uint64_t cb = c << 2;
    const uint64_t cbr = cb + 2;
    uint64_t cbl;
    int k;
    if (!irregular) {
        cbl = cb - 2;
        k = floor_log10_pow2(q);
    } else {
        cbl = cb - 1;
        k = floor_log10_three_quarters_pow2(q);
    }
    const uint64_t *g = numfmt_pow10_128[-k - NUMFMT_POW10_MIN_E];
    const int h = q + floor_log2_pow10(-k) + 1; /* 1..4: cb << h < 2^59 */
    const uint64_t vb = round_to_odd_64(g, cb << h);
    const uint64_t lower = round_to_odd_64(g, cbl << h) + open;
    const uint64_t upper = round_to_odd_64(g, cbr << h) - open;
    SCHUBFACH_PASS3(uint64_t, vb, lower, upper, k);
}

static decimal shortest_float(uint32_t c, int q, bool irregular)
{
    const uint32_t open = c & 1;
    const uint32_t cb = c << 2;
    const uint32_t cbr = cb + 2;
    uint32_t cbl;
    int k;
    if (!irregular) {
        cbl = cb - 2;
        k = floor_log10_pow2(q);
    } else {
        cbl = cb - 1;
        k = floor_log10_three_quarters_pow2(q);
    }
    const uint64_t g = numfmt_pow10_64[-k - NUMFMT_POW10F_MIN_E];
    const int h = q + floor_log2_pow10(-k) + 1; /* 1..4: cb << h < 2^30 */
    const uint32_t vb = round_to_odd_32(g, cb << h);
    const uint32_t lower = round_to_odd_32(g, cbl << h) + open;
    const uint32_t upper = round_to_odd_32(g, cbr << h) - open;
    SCHUBFACH_PASS3(uint32_t, vb, lower, upper, k);
}

/* ---- digits ------------------------------------------------------------ */

static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

static inline void write_2(char *p, uint32_t x) /* x < 100 */
{
    memcpy(p, two_digits + 2 * x, 2);
}

static inline void write_4(char *p, uint32_t x) /* x < 10^4 */
{
    write_2(p, x / 100);
    write_2(p + 2, x % 100);
}

static inline void write_8(char *p, uint32_t x) /* x < 10^8 */
{
    write_4(p, x / 10000);
    write_4(p + 4, x % 10000);
}

/* Significant digits of a double (< 10^17) or a float (< 10^9). */
#define DOUBLE_DIGITS 17
#define FLOAT_DIGITS 9
/* The layout copies in fixed 16- and 17-byte blocks from the first digit
 * (never more than 32 bytes past it): the digit buffer has that slack. */
#define DIGIT_BUF (DOUBLE_DIGITS + 32)

/* The digits of x, exactly `width` of them (17 or 9) with leading zeros,
 * into buf; returns how many are significant (no leading zeros). */
static inline int write_digits(char *buf, uint64_t x, int width)
{
    if (width == DOUBLE_DIGITS) {
        const uint32_t high = (uint32_t)(x / 100000000); /* < 10^9 */
        buf[0] = (char)('0' + high / 100000000);
        write_8(buf + 1, high % 100000000);
        write_8(buf + 9, (uint32_t)(x % 100000000));
    } else {
        buf[0] = (char)('0' + x / 100000000);
        write_8(buf + 1, (uint32_t)(x % 100000000));
    }
    int leading = 0;
    while (buf[leading] == '0')
        leading++;
    return width - leading;
}

/* ---- layout ------------------------------------------------------------ */

/* Writes [-]digits[0..len) * 10^exp as std::to_chars's shortest mode does,
 * plus our whole-number rule when `big` (|v| >= 2^53, float 2^24).  digits
 * has DIGIT_BUF - DOUBLE_DIGITS bytes of slack after its end. */
static size_t layout(char out[NUMFMT_MAX], bool negative, const char *digits,
                     int len, int exp, bool big)
{
    /* Assembled in a larger buffer with fixed-size copies, then copied
     * whole: one 32-byte copy instead of length-dependent ones. */
    char buf[64] = {0};
    char *p = buf + negative;
    buf[0] = '-';
    const int point = len + exp; /* digits before the decimal point */
    /* The lengths: fixed is len + exp ("12300"), len + 1 ("1.23"),
     * 2 - exp ("0.00123"); scientific len + 1 + 4 ("1.23e+05"), without
     * the point for one digit; ties go to fixed. */
    bool fixed = len == 1 ? exp >= -3 && exp <= 4
                          : exp >= -(len + 3) && exp <= 5;
    if (fixed && exp >= 0 && big)
        fixed = false;
    size_t n;
    if (fixed && exp >= 0) {
        memcpy(p, digits, DOUBLE_DIGITS);
        memcpy(p + len, "00000", 5); /* exp <= 5 */
        n = (size_t)point;
    } else if (fixed && point > 0) {
        memcpy(p, digits, 16); /* point < len <= 17 */
        p[point] = '.';
        memcpy(p + point + 1, digits + point, 16);
        n = (size_t)len + 1;
    } else if (fixed) {
        memcpy(p, "0.000", 5); /* point >= -3 */
        memcpy(p + 2 - point, digits, DOUBLE_DIGITS);
        n = (size_t)(2 - point + len);
    } else {
        p[0] = digits[0];
        p[1] = '.';
        memcpy(p + 2, digits + 1, 16);
        n = len == 1 ? 1 : (size_t)len + 1;
        const int x = point - 1; /* the exponent of the first digit */
        const uint32_t ax = (uint32_t)(x < 0 ? -x : x);
        char *e = p + n;
        e[0] = 'e';
        e[1] = x < 0 ? '-' : '+';
        if (ax >= 100) {
            e[2] = (char)('0' + ax / 100);
            write_2(e + 3, ax % 100);
            n += 5;
        } else {
            write_2(e + 2, ax);
            n += 4;
        }
    }
    n += negative;
    buf[n] = '\0';
    memcpy(out, buf, NUMFMT_MAX);
    return n;
}

/* "0", "-0", and what std::to_chars writes for the non-finite. */
static size_t special(char out[NUMFMT_MAX], bool negative, const char *word)
{
    char *p = out;
    if (negative)
        *p++ = '-';
    size_t n = strlen(word);
    memcpy(p, word, n + 1);
    return n + (size_t)negative;
}

/* ---- entry points ------------------------------------------------------ */

#define DOUBLE_FRACTION_BITS 52
#define DOUBLE_EXP_MASK 0x7ff
#define DOUBLE_BIAS 1075 /* v = c * 2^(biased - 1075) for normal values */
/* 2^53's biased exponent: from here on every double is a whole number
 * whose fixed notation would pass int64-unsafe integers to JSON readers. */
#define DOUBLE_BIG_BIASED (1023 + 53)

size_t numfmt_double(double value, char out[NUMFMT_MAX])
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    const bool negative = bits >> 63;
    const uint64_t fraction =
        bits & ((UINT64_C(1) << DOUBLE_FRACTION_BITS) - 1);
    const int biased = (int)(bits >> DOUBLE_FRACTION_BITS) & DOUBLE_EXP_MASK;
    decimal d;
    if (biased == DOUBLE_EXP_MASK)
        return special(out, negative, fraction ? "nan" : "inf");
    if (biased != 0)
        d = shortest_double(fraction | UINT64_C(1) << DOUBLE_FRACTION_BITS,
                            biased - DOUBLE_BIAS, fraction == 0 && biased > 1);
    else if (fraction != 0) /* subnormal: same spacing as biased 1 */
        d = shortest_double(fraction, 1 - DOUBLE_BIAS, false);
    else
        return special(out, negative, "0");
    char digits[DIGIT_BUF] = {0};
    const int len = write_digits(digits, d.digits, DOUBLE_DIGITS);
    const char *first = digits + DOUBLE_DIGITS - len;
    int end = DOUBLE_DIGITS;
    while (digits[end - 1] == '0') /* strip the trailing zeros */
        end--;
    return layout(out, negative, first, end - (DOUBLE_DIGITS - len),
                  d.exp + DOUBLE_DIGITS - end, biased >= DOUBLE_BIG_BIASED);
}

#define FLOAT_FRACTION_BITS 23
#define FLOAT_EXP_MASK 0xff
#define FLOAT_BIAS 150
#define FLOAT_BIG_BIASED (127 + 24) /* 2^24 */

size_t numfmt_float(float value, char out[NUMFMT_MAX])
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    const bool negative = bits >> 31;
    const uint32_t fraction = bits & ((UINT32_C(1) << FLOAT_FRACTION_BITS) - 1);
    const int biased = (int)(bits >> FLOAT_FRACTION_BITS) & FLOAT_EXP_MASK;
    decimal d;
    if (biased == FLOAT_EXP_MASK)
        return special(out, negative, fraction ? "nan" : "inf");
    if (biased != 0)
        d = shortest_float(fraction | UINT32_C(1) << FLOAT_FRACTION_BITS,
                           biased - FLOAT_BIAS, fraction == 0 && biased > 1);
    else if (fraction != 0)
        d = shortest_float(fraction, 1 - FLOAT_BIAS, false);
    else
        return special(out, negative, "0");
    char digits[DIGIT_BUF] = {0};
    const int len = write_digits(digits, d.digits, FLOAT_DIGITS);
    const char *first = digits + FLOAT_DIGITS - len;
    int end = FLOAT_DIGITS;
    while (digits[end - 1] == '0')
        end--;
    return layout(out, negative, first, end - (FLOAT_DIGITS - len),
                  d.exp + FLOAT_DIGITS - end, biased >= FLOAT_BIG_BIASED);
}
