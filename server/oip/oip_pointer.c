/*
 * oip_pointer.c - the pointers and names the Open Inference Protocol's
 * reader writes into its refusals ("/inputs/2/shape", "[3, 2]", a list of
 * field names), shared by its three files (oip_reader.h) and below them:
 * oip_decode.c, oip_inputs.c and oip_binary.c call down into it.
 */
#include "server/oip/oip_reader.h"

#include <stdio.h>
#include <string.h>

/* Appends "/token" to the pointer out; a token that does not fit (a member
 * name longer than a pointer holds) leaves out naming the parent. */
void oip_pointer_append(char out[CODEC_POINTER_MAX], const char *token)
{
    size_t len = strlen(out);
    if (!codec_pointer_append(out, CODEC_POINTER_MAX, token))
        out[len] = '\0';
}

/* out = "/a/b" for tokens a and b (b may be NULL). */
void oip_pointer2(char out[CODEC_POINTER_MAX], const char *a, const char *b)
{
    out[0] = '\0';
    oip_pointer_append(out, a);
    if (b)
        oip_pointer_append(out, b);
}

/* out = "/inputs/i" followed by member when not NULL. */
void oip_input_pointer(char out[CODEC_POINTER_MAX], size_t i,
                       const char *member)
{
    char index[24];
    snprintf(index, sizeof index, "%zu", i);
    oip_pointer2(out, "inputs", index);
    if (member)
        oip_pointer_append(out, member);
}

/* Joins the names of the fields `keep` accepts, in table order. */
void oip_field_names(char out[SCHEMA_LIST_MAX], bool (*keep)(api_field))
{
    size_t len = 0;
    out[0] = '\0';
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        if (!keep((api_field)f))
            continue;
        int wrote = snprintf(out + len, SCHEMA_LIST_MAX - len, "%s%s",
                             len ? ", " : "", api_schema[f].name);
        if (wrote < 0 || (size_t)wrote >= SCHEMA_LIST_MAX - len)
            break; /* names are short: see schema.c's assertion */
        len += (size_t)wrote;
    }
}

/* "[3, 2]" */
void oip_shape_words(const schema_tensor *t, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < t->rank && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%zu", i ? ", " : "",
                                t->dims[i]);
    if (len < size)
        snprintf(out + len, size - len, "]");
}
