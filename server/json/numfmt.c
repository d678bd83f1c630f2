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
 * when there are three or more); we try it always: when a one-digit s and
 * 10^(k+1) both fit (the tiniest subnormals), the coarser 10^(k+1) wins, as
 * in Ryu and so in std::to_chars.
 *
 * The digits are then made 8 at a time in a register and laid out as C++17's
 * std::to_chars(first, last, value) does (libstdc++'s, which this file
 * replaced, being faster: make bench-numfmt, docs/performance.md): fixed or
 * scientific notation, whichever is shorter, fixed on a tie; the exponent
 * with its sign and at least two digits ("1e+22", "1e-07"); "-0" for
 * negative zero.  One rule of ours on top: a whole number of 2^53 or more
 * (float: 2^24) printed in fixed notation looks like an integer literal that
 * overflows int64 in many JSON parsers (jansson's default mode refuses it;
 * Python reads an int), so such values are written in exponent form, still
 * shortest, e.g. 1.2344567890123457e+20.
 *
 * tests/numfmt compares every output with std::to_chars byte for byte.
 */
#include "server/json/numfmt.h"

#include "server/json/numfmt_table.h"

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

/* The three products of pass 2 for doubles come from one: with P = g * cp
 * (192 bits) and cb's neighbours cb +- 2 (or - 1), their products are
 * P +- g << (h + 1) (or h): a shift and an add instead of two more
 * multiplications.  Of a 192-bit product the top word is floor(x / 2^128),
 * and bit 0 is set when the middle word is not zero: g exceeds the power of
 * ten it stands for by less than one unit and cp < 2^59, so the error stays
 * below 2^-69 and only a true fraction can reach the middle word. */
static inline uint64_t odd_top(u128 middle_top)
{
    return (uint64_t)(middle_top >> 64) | ((uint64_t)middle_top != 0);
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

/* Pass 3 without branches (which of the cases applies is as good as random
 * for real data, and a mispredicted branch costs more than all of this):
 *   sp = s / 10: u' = 10 sp and w' = u' + 10 are the multiples of 10^(k+1)
 *   around v; if exactly one is in R, it is the answer;
 *   else of s and t = s + 1 (the multiples of 10^k around v) the one in R,
 *   or if both are, the nearer to v (vb against their midpoint 4s + 2),
 *   on a tie the even one. */
#define SCHUBFACH_PASS3(uint, vb, lower, upper, k)                             \
    do {                                                                       \
        const uint s = (vb) >> 2;                                              \
        const uint sp = s / 10;                                                \
        const bool upin = (lower) <= 40 * sp;                                  \
        const bool wpin = 40 * sp + 40 <= (upper);                             \
        const bool uin = (lower) <= 4 * s;                                     \
        const bool win = 4 * s + 4 <= (upper);                                 \
        const uint mid = 4 * s + 2;                                            \
        const uint round_up = ((vb) > mid) | (((vb) == mid) & (uint)s);        \
        const bool coarse = upin != wpin;                                      \
        const uint fine = s + (win & ((uin ^ 1) | (round_up & 1)));            \
        return (decimal){coarse ? sp + wpin : fine, (k) + coarse};             \
    } while (0)

static inline decimal shortest_double(uint64_t c, int q, bool irregular)
{
    const uint64_t open = c & 1;
    const int k =
        irregular ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);
    const uint64_t *g = numfmt_pow10_128[-k - NUMFMT_POW10_MIN_E];
    const int h = q + floor_log2_pow10(-k) + 1; /* 1..4: cb << h < 2^59 */
    const uint64_t cp = c << (2 + h);           /* cb << h */
    /* P = g * cp = top:low, 192 bits */
    const u128 low_product = (u128)g[1] * cp;
    const uint64_t low = (uint64_t)low_product;
    const u128 top = (u128)g[0] * cp + (uint64_t)(low_product >> 64);
    /* g << (h + 1) for cbr = cb + 2; g << h (irregular) or g << (h + 1)
     * for cbl = cb - 1 or cb - 2; as low word and top 128 bits */
    const u128 g128 = (u128)g[0] << 64 | g[1];
    const int right_shift = h + 1, left_shift = h + 1 - irregular;
    const uint64_t right_low = g[1] << right_shift;
    const u128 right_top = g128 >> (64 - right_shift);
    const uint64_t left_low = g[1] << left_shift;
    const u128 left_top = g128 >> (64 - left_shift);
    const uint64_t vb = odd_top(top);
    const uint64_t upper =
        odd_top(top + right_top + (low + right_low < low)) - open;
    const uint64_t lower = odd_top(top - left_top - (low < left_low)) + open;
    SCHUBFACH_PASS3(uint64_t, vb, lower, upper, k);
}

static inline decimal shortest_float(uint32_t c, int q, bool irregular)
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
/* The decimal is first scaled to exactly 17 digits, its first one nonzero
 * (a float's 9 get 8 zeros after them): digits d0, then two blocks of 8.
 * A block is made in one 64-bit register, one digit per byte in reading
 * order ("SWAR": a few multiplications split all lanes at once), so zeros
 * at its end are counted with one clz, and the text is stored to `out`
 * 8 bytes at a time and never read back (reading back bytes just written
 * one by one stalls the CPU's store forwarding: docs/performance.md, "The
 * server's constants"). */

/* decimal digits of the shortest form, at most: double, float */
#define SIGNIFICANT 17
#define FLOAT_SIGNIFICANT 9

static const uint64_t pow10_u64[SIGNIFICANT + 3] = {
    UINT64_C(1),
    UINT64_C(10),
    UINT64_C(100),
    UINT64_C(1000),
    UINT64_C(10000),
    UINT64_C(100000),
    UINT64_C(1000000),
    UINT64_C(10000000),
    UINT64_C(100000000),
    UINT64_C(1000000000),
    UINT64_C(10000000000),
    UINT64_C(100000000000),
    UINT64_C(1000000000000),
    UINT64_C(10000000000000),
    UINT64_C(100000000000000),
    UINT64_C(1000000000000000),
    UINT64_C(10000000000000000),
    UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000),
};

/* Number of decimal digits of x, 1 <= x < 10^19: log2 via clz, times
 * log10(2) ~ 1233/4096, then one comparison. */
static inline int decimal_length(uint64_t x)
{
    const int t = ((64 - __builtin_clzll(x)) * 1233) >> 12;
    return t - (x < pow10_u64[t]) + 1;
}

/* x < 10^8 as 8 digit values (not yet ASCII), the first in the lowest byte:
 * split into 4-digit halves (32-bit lanes), each lane by 100 (16-bit lanes),
 * each by 10 (bytes).  The lanes never overflow into each other:
 * (x * 10486) >> 20 == x / 100 for x < 10^4, (x * 103) >> 10 == x / 10 for
 * x < 100. */
static inline uint64_t digit_bytes(uint32_t x)
{
    uint64_t v = (x / 10000) | ((uint64_t)(x % 10000) << 32);
    const uint64_t hundreds =
        ((v * 10486) >> 20) & UINT64_C(0x0000007f0000007f);
    v = hundreds | ((v - 100 * hundreds) << 16);
    const uint64_t tens = ((v * 103) >> 10) & UINT64_C(0x000f000f000f000f);
    return tens | ((v - 10 * tens) << 8);
}

#define ASCII_ZEROS UINT64_C(0x3030303030303030) /* "00000000" */

static inline void store_8(char *p, uint64_t v) { memcpy(p, &v, 8); }

static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536"
    "37383940414243444546474849505152535455565758596061626364656667686970717273"
    "7475767778798081828384858687888990919293949596979899";

/* ---- layout ------------------------------------------------------------ */

/* Writes [-]text * 10^exp as std::to_chars's shortest mode does, plus our
 * whole-number rule when `big` (|v| >= 2^53, float 2^24).  text is 17
 * digits, the first nonzero: `first`, then the digit bytes of blocks a and
 * b (see digit_bytes); exp is the power of ten of its last digit.  Stores
 * reach at most out[27]. */
static inline __attribute__((always_inline)) size_t
layout(char out[NUMFMT_MAX], bool negative, uint32_t first, uint64_t a,
       uint64_t b, int exp, bool big)
{
    /* trailing zeros: digit bytes that are 0 at the end of b, then of a */
    const int zeros =
        b ? __builtin_clzll(b) / 8 : 8 + (a ? __builtin_clzll(a) / 8 : 8);
    const int len = SIGNIFICANT - zeros; /* significant digits */
    exp += zeros;
    const uint64_t a_text = a | ASCII_ZEROS, b_text = b | ASCII_ZEROS;

    char *p = out;
    *p = '-';
    p += negative;
    const int point = len + exp; /* digits before the decimal point */
    /* The lengths: fixed is len + exp ("12300"), len + 1 ("1.23"),
     * 2 - exp ("0.00123"); scientific len + 1 + 4 ("1.23e+05"), without
     * the point for one digit; ties go to fixed. */
    bool fixed =
        len == 1 ? exp >= -3 && exp <= 4 : exp >= -(len + 3) && exp <= 5;
    if (fixed && exp >= 0 && big)
        fixed = false;
    if (fixed && exp >= 0) {
        /* a whole number below 2^53 (2^24): at most 16 digits, its zeros
         * already among the 17 */
        p[0] = (char)('0' + first);
        store_8(p + 1, a_text);
        store_8(p + 9, b_text);
        p[point] = '\0';
        return (size_t)(negative + point);
    }
    if (fixed && point > 0) {
        /* digits 1..16 as one 128-bit string; the point goes in at byte
         * point - 1 (point < len <= 17), the last digit moves to p[17] */
        const u128 ascii = (u128)b_text << 64 | a_text;
        const int at = 8 * (point - 1);
        const u128 below = ((u128)1 << at) - 1;
        const u128 text =
            (ascii & below) | (u128)'.' << at | (ascii & ~below) << 8;
        p[0] = (char)('0' + first);
        memcpy(p + 1, &text, 16);
        p[17] = (char)(b_text >> 56);
        p[len + 1] = '\0';
        return (size_t)(negative + len + 1);
    }
    if (fixed) {
        /* 0.[000]digits: point in -3..0 */
        store_8(p, UINT64_C(0x303030303030) << 16 | '.' << 8 | '0');
        char *q = p + 2 - point;
        q[0] = (char)('0' + first);
        store_8(q + 1, a_text);
        store_8(q + 9, b_text);
        q[len] = '\0';
        return (size_t)(negative + 2 - point + len);
    }
    /* scientific: d.ddde+XX, d.ddde-XXX, de+XX */
    p[0] = (char)('0' + first);
    p[1] = '.';
    store_8(p + 2, a_text);
    store_8(p + 10, b_text);
    const int mantissa = len == 1 ? 1 : len + 1;
    const int x = point - 1; /* the exponent of the first digit */
    const uint32_t ax = (uint32_t)(x < 0 ? -x : x);
    uint64_t e = 'e' | (uint64_t)(x < 0 ? '-' : '+') << 8; /* NUL after */
    int e_len;
    if (ax >= 100) {
        uint16_t pair;
        memcpy(&pair, two_digits + 2 * (ax % 100), 2);
        e |= (uint64_t)('0' + ax / 100) << 16 | (uint64_t)pair << 24;
        e_len = 5;
    } else {
        uint16_t pair;
        memcpy(&pair, two_digits + 2 * ax, 2);
        e |= (uint64_t)pair << 16;
        e_len = 4;
    }
    store_8(p + mantissa, e);
    return (size_t)(negative + mantissa + e_len);
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
    /* 17 digits with `lead` leading zeros: first0, then two blocks of 8;
     * the text is shifted down by `lead` bytes afterwards, which keeps the
     * digit count off the critical path (scaling d.digits up first is
     * fewer instructions but measured slower) */
    const int lead = SIGNIFICANT - decimal_length(d.digits);
    const uint64_t high = d.digits / 100000000; /* < 10^9 */
    const uint32_t first0 = (uint32_t)(d.digits / pow10_u64[16]);
    const u128 tail0 =
        (u128)digit_bytes((uint32_t)(d.digits - high * 100000000)) << 64 |
        digit_bytes((uint32_t)(high - first0 * UINT64_C(100000000)));
    const u128 shifted = tail0 >> (8 * (lead - (lead > 0)));
    const uint32_t first = lead ? (uint32_t)(uint8_t)shifted : first0;
    const u128 tail = lead ? shifted >> 8 : tail0;
    return layout(out, negative, first, (uint64_t)tail, (uint64_t)(tail >> 64),
                  d.exp - lead, biased >= DOUBLE_BIG_BIASED);
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
    /* scaled to exactly 9 digits (< 10^9), then 8 zeros */
    const int scale = FLOAT_SIGNIFICANT - decimal_length(d.digits);
    const uint32_t text = (uint32_t)(d.digits * pow10_u64[scale]);
    return layout(out, negative, text / 100000000,
                  digit_bytes(text % 100000000), 0,
                  d.exp - scale - (SIGNIFICANT - FLOAT_SIGNIFICANT),
                  biased >= FLOAT_BIG_BIASED);
}
