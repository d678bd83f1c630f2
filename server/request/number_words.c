/*
 * number_words.c - a number as a refusal quotes it (number_words.h).
 */
#include "server/request/number_words.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

void number_words(double value, char out[NUMBER_WORDS_MAX])
{
    bool digits = value == floor(value) && fabs(value) < 1e21;
    snprintf(out, NUMBER_WORDS_MAX, digits ? "%.0f" : "%.17g", value);
}
