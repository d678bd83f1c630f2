/*
 * numfmt.h - the one place that turns numbers into JSON text.
 *
 * Writes the shortest decimal that parses back (strtod / strtof) to exactly
 * the same value of the given width, so 0.1 prints as 0.1 and every float64
 * survives a round trip through any correct JSON parser bit for bit.
 */
#ifndef SERVER_NUMFMT_H
#define SERVER_NUMFMT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for the longest output ("-2.2250738585072014e-308") plus NUL. */
#define NUMFMT_MAX 32

/* Formats a finite value; returns the length written to out (not counting
 * the NUL after it).  Bytes of out past the NUL may be overwritten too. */
size_t numfmt_double(double value, char out[NUMFMT_MAX]);
size_t numfmt_float(float value, char out[NUMFMT_MAX]);

#ifdef __cplusplus
}
#endif

#endif
