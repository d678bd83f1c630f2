/*
 * whole_literals.c - a whole number must be written as one
 * (whole_literals.h).
 */
#include "server/json/whole_literals.h"

#include "server/json/literal_walk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fewer significant digits than this, and a number of at least 1e-300 that
 * is not whole as written stays so as a double: a double's 53 bits tell
 * apart every number of 15 significant digits (DBL_DIG), and a whole one
 * of 16 digits or more has no fraction to write. */
#define WHOLE_LITERAL_EXACT_DIGITS 16
/* Below this a number's double may be 0 (below 4.9e-324) or lose digits. */
#define WHOLE_LITERAL_TINY_EXPONENT (-300)
/* A number of q integer digits that a double rounds to a whole number k
 * lies within 2^-53 |k| < 10^(q - 15) of it: the first 15 - q digits of its
 * fraction are all 0 or all 9.  One digit fewer is looked at, for margin. */
#define WHOLE_LITERAL_NEAR_DIGITS 14
/* A literal this long is not converted again: it is taken as rounding. */
#define WHOLE_LITERAL_CONVERT_MAX 64
/* Its words in a refusal: longer ones are cut, "..." after. */
#define WHOLE_LITERAL_QUOTE_MAX 40

/* The digits of a JSON number: D = its integer digits then its fraction
 * digits, the decimal point after `point` of them (the exponent applied). */
typedef struct {
    const char *integer, *fraction;
    size_t integer_len, fraction_len;
    long long point;
} number_digits;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool read_digits(const char *s, size_t n, number_digits *d)
{
    size_t i = n && s[0] == '-';
    if (i >= n || !is_digit(s[i]))
        return false; /* true, false, null */
    *d = (number_digits){.integer = s + i};
    while (i < n && is_digit(s[i]))
        i++;
    d->integer_len = (size_t)(s + i - d->integer);
    if (i < n && s[i] == '.') {
        d->fraction = s + ++i;
        while (i < n && is_digit(s[i]))
            i++;
        d->fraction_len = (size_t)(s + i - d->fraction);
    }
    long long exponent = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        bool minus = ++i < n && s[i] == '-';
        i += i < n && (s[i] == '-' || s[i] == '+');
        for (; i < n && is_digit(s[i]); i++) /* held past any double's */
            if (exponent < 100000000)
                exponent = exponent * 10 + (s[i] - '0');
        exponent = minus ? -exponent : exponent;
    }
    d->point = (long long)d->integer_len + exponent;
    return true;
}

/* Digit k of D. */
static char digit_at(const number_digits *d, size_t k)
{
    return k < d->integer_len ? d->integer[k] : d->fraction[k - d->integer_len];
}

/* Digit j of the fraction (after the point the exponent put), 0s before
 * and after D. */
static char fraction_digit(const number_digits *d, size_t j)
{
    long long k = d->point + (long long)j;
    size_t count = d->integer_len + d->fraction_len;
    return k < 0 || k >= (long long)count ? '0' : digit_at(d, (size_t)k);
}

/* Whether the fraction may lie near enough to a whole number for a double
 * to round it to one (WHOLE_LITERAL_NEAR_DIGITS). */
static bool fraction_near_whole(const number_digits *d)
{
    long long q = d->point > 0 ? d->point : 0;
    if (q >= WHOLE_LITERAL_NEAR_DIGITS)
        return true;
    char first = fraction_digit(d, 0);
    if (first != '0' && first != '9')
        return false;
    for (size_t j = 1; j < (size_t)(WHOLE_LITERAL_NEAR_DIGITS - q); j++)
        if (fraction_digit(d, j) != first)
            return false;
    return true;
}

static bool digits_whole(const number_digits *d)
{
    size_t count = d->integer_len + d->fraction_len;
    /* every digit at or after the point (all of them when it is before
     * the first) */
    size_t k = d->point > 0 ? (size_t)d->point : 0;
    while (k < count && digit_at(d, k) == '0')
        k++;
    return k >= count;
}

bool whole_literal_is_whole(const char *s, size_t n)
{
    number_digits d;
    return read_digits(s, n, &d) && digits_whole(&d);
}

bool whole_literal_rounds(const char *s, size_t n)
{
    number_digits d;
    if (!read_digits(s, n, &d) || digits_whole(&d))
        return false;
    size_t count = d.integer_len + d.fraction_len, first = 0;
    while (first < count && digit_at(&d, first) == '0')
        first++;
    /* the decimal exponent of the first digit that is not 0 */
    long long lead = d.point - 1 - (long long)first;
    if ((count - first < WHOLE_LITERAL_EXACT_DIGITS &&
         lead >= WHOLE_LITERAL_TINY_EXPONENT) ||
        !fraction_near_whole(&d))
        return false;
    if (n >= WHOLE_LITERAL_CONVERT_MAX)
        return true;
    char copy[WHOLE_LITERAL_CONVERT_MAX];
    memcpy(copy, s, n);
    copy[n] = '\0';
    double value = strtod(copy, NULL);
    return value == floor(value);
}

typedef struct {
    whole_literal_slot slot;
    void *ctx;
    codec_error *err;
    bool refused;
} whole_walk;

static bool check_literal(void *ctx, const literal_path *path, const char *text,
                          size_t at, size_t n)
{
    whole_walk *w = ctx;
    const char *literal = text + at;
    if (!whole_literal_rounds(literal, n))
        return true;
    char ptr[CODEC_POINTER_MAX];
    literal_pointer(path, ptr); /* a parent, when it does not fit */
    error_code code = w->slot(w->ctx, ptr);
    if (code == ERR_NONE)
        return true;
    int shown = n > WHOLE_LITERAL_QUOTE_MAX ? WHOLE_LITERAL_QUOTE_MAX : (int)n;
    const char *cut = (size_t)shown < n ? "..." : "";
    if (n >= WHOLE_LITERAL_CONVERT_MAX) {
        codec_fail(w->err, code, ptr,
                   "a whole number belongs here, and %.*s%s is not one", shown,
                   literal, cut);
    } else {
        char copy[WHOLE_LITERAL_CONVERT_MAX];
        memcpy(copy, literal, n);
        copy[n] = '\0';
        codec_fail(w->err, code, ptr,
                   "a whole number belongs here, and %.*s%s is not one, "
                   "though a double rounds it to %.17g",
                   shown, literal, cut, strtod(copy, NULL));
    }
    w->refused = true;
    return false;
}

bool whole_literals_check(const char *text, size_t len, whole_literal_slot slot,
                          void *ctx, codec_error *err)
{
    whole_walk w = {slot, ctx, err, false};
    literal_walk(text, len, check_literal, &w);
    return !w.refused;
}
