/*
 * numfmt.c - shortest round-trip formatting by increasing precision.
 *
 * A double has at most 17 significant digits that matter and any decimal of
 * 15 digits or fewer survives double → text → double, so the shortest
 * representation is found among %.15g, %.16g and %.17g (a float: %.6g to
 * %.9g).  %g strips trailing zeros, so a value like 0.5 comes out as "0.5".
 */
#include "numfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t numfmt_double(double value, char out[NUMFMT_MAX])
{
    int len = 0;
    for (int digits = 15; digits <= 17; digits++) {
        len = snprintf(out, NUMFMT_MAX, "%.*g", digits, value);
        if (strtod(out, NULL) == value)
            break;
    }
    return (size_t)len;
}

size_t numfmt_float(float value, char out[NUMFMT_MAX])
{
    int len = 0;
    for (int digits = 6; digits <= 9; digits++) {
        len = snprintf(out, NUMFMT_MAX, "%.*g", digits, (double)value);
        if (strtof(out, NULL) == value)
            break;
    }
    return (size_t)len;
}
