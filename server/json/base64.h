/*
 * base64.h - RFC 4648 base64 (standard alphabet, padded), for the binary
 * tensor encoding: raw little-endian IEEE-754 numbers in a JSON string.
 */
#ifndef SERVER_BASE64_H
#define SERVER_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* Characters base64_encode() writes for len bytes (no NUL). */
size_t base64_encoded_size(size_t len);

/* Writes base64 of src to dst (base64_encoded_size(len) bytes). */
void base64_encode(const void *src, size_t len, char *dst);

/* Decodes text into dst (room for text_len / 4 * 3 bytes); false on any
 * character outside the alphabet, bad padding or a length not a multiple of
 * 4.  *len receives the bytes written. */
bool base64_decode(const char *text, size_t text_len, void *dst, size_t *len);

#endif
