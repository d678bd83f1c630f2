/*
 * print_schema.c - prints the server's request schema (api_schema[]), the
 * core's stage names and the error-code table (error_codes[]) as JSON, for
 * the contract test (check_openapi.py), which compares them with
 * openapi.yaml and docs/api.md, and for the OIP suite (tests/oip/).
 *
 *   {"fields": [{"name": "x", "kind": "tensor", ...}, ...],
 *    "stages": ["x_pe", "q", ...],
 *    "codes": [{"code": "invalid_json", "status": 400,
 *               "title": "Bad Request", "retry_after": 0}, ...]}
 */
#include "core/attention.h"
#include "server/base/buf.h"
#include "server/base/error_codes.h"
#include "server/request/schema.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const leaf_names[] = {
    [SCHEMA_LEAF_NUMBER] = "number",
    [SCHEMA_LEAF_BOOL] = "boolean",
    [SCHEMA_LEAF_EITHER] = "either",
};

/* s as a JSON string, escaped as the server escapes its own (buf.c). */
static void print_string(const char *s)
{
    buf b = {0};
    buf_json_string(&b, s);
    if (buf_failed(&b)) {
        fputs("print_schema: out of memory\n", stderr);
        exit(1);
    }
    fwrite(b.data, 1, b.len, stdout);
    buf_free(&b);
}

/* One row as a JSON object (an object field's members nested in it). */
static void print_row(const schema_field *row)
{
    printf("{\"name\": ");
    print_string(row->name);
    printf(", \"kind\": \"%s\", \"required\": %s", schema_kind_name(row->kind),
           row->required ? "true" : "false");
    if (row->kind == SCHEMA_TENSOR)
        printf(", \"min_rank\": %d, \"max_rank\": %d, \"leaf\": \"%s\", "
               "\"whole\": %s, \"distinct\": %s",
               row->min_rank, row->max_rank, leaf_names[row->leaf],
               row->whole ? "true" : "false", row->distinct ? "true" : "false");
    if (row->kind == SCHEMA_INTEGER)
        printf(", \"minimum\": %g", row->min);
    if (row->kind == SCHEMA_NUMBER)
        printf(", \"positive\": %s", row->positive ? "true" : "false");
    if (row->kind == SCHEMA_ENUM) {
        printf(", \"choices\": [");
        for (size_t i = 0; i < row->choice_count; i++) {
            fputs(i ? ", " : "", stdout);
            print_string(row->choices[i].name);
        }
        printf("]");
    }
    error_code type_code = row->type_code ? row->type_code : ERR_WRONG_TYPE;
    printf(", \"codes\": [");
    print_string(error_code_info(type_code)->name);
    if (row->invalid_code) {
        printf(", ");
        print_string(error_code_info(row->invalid_code)->name);
    }
    printf("]");
    if (row->oip_instead) {
        printf(", \"oip_instead\": ");
        print_string(row->oip_instead);
    }
    if (row->kind == SCHEMA_OBJECT) {
        printf(", \"members\": [");
        for (size_t i = 0; i < row->member_count; i++) {
            fputs(i ? ", " : "", stdout);
            print_row(&row->members[i]);
        }
        printf("]");
    }
    printf("}");
}

int main(void)
{
    printf("{\"fields\": [");
    for (int f = 0; f < API_FIELD_COUNT; f++) {
        printf(f ? ",\n  " : "\n  ");
        print_row(&api_schema[f]);
    }
    printf("\n],\n\"stages\": [");
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        fputs(s ? ", " : "", stdout);
        print_string(attn_stage_name((attn_stage)s));
    }
    printf("],\n\"codes\": [");
    for (int c = ERR_NONE + 1; c < ERR_CODE_COUNT; c++) {
        const error_code_row *row = error_code_info((error_code)c);
        printf("%s\n  {\"code\": ", c > ERR_NONE + 1 ? "," : "");
        print_string(row->name);
        printf(", \"status\": %u, \"title\": ", row->status);
        print_string(row->title);
        printf(", \"retry_after\": %u}", row->retry_after);
    }
    printf("\n]}\n");
    return 0;
}
