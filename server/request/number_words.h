/*
 * number_words.h - a number as a refusal quotes it.
 *
 * A rule that refuses a number quotes it as the client wrote it when the
 * codec that read the request can find it again (api_fields.literal;
 * server/json/number_literal.h for JSON), else in words written from the
 * double (number_words.c).
 */
#ifndef SERVER_REQUEST_NUMBER_WORDS_H
#define SERVER_REQUEST_NUMBER_WORDS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a quoted number: longer ones are cut, "..." after 40 bytes. */
#define NUMBER_WORDS_MAX 48

/* out = value in words: whole and below 10^21, every digit; else "%.17g",
 * which a double reads back exactly. */
void number_words(double value, char out[NUMBER_WORDS_MAX]);

#ifdef __cplusplus
}
#endif

#endif
