/*
 * print_schema.c - prints the server's request schema (api_schema[]) and the
 * core's stage names as JSON, for the OpenAPI contract test
 * (check_openapi.py), which compares them with openapi.yaml.
 */
#include "core/attention.h"
#include "server/json/schema.h"

#include <stdio.h>

static const char *const kind_names[] = {
    [SCHEMA_TENSOR] = "tensor", [SCHEMA_INTEGER] = "integer",
    [SCHEMA_NUMBER] = "number", [SCHEMA_BOOLEAN] = "boolean",
    [SCHEMA_ENUM] = "enum",     [SCHEMA_STAGES] = "stages",
    [SCHEMA_LABELS] = "labels", [SCHEMA_OBJECT] = "object",
};
static const char *const leaf_names[] = {
    [SCHEMA_LEAF_NUMBER] = "number",
    [SCHEMA_LEAF_BOOL] = "boolean",
    [SCHEMA_LEAF_EITHER] = "either",
};

/* One row as a JSON object (an object field's members nested in it). */
static void print_row(const schema_field *row)
{
    printf("{\"name\": \"%s\", \"kind\": \"%s\", \"required\": %s", row->name,
           kind_names[row->kind], row->required ? "true" : "false");
    if (row->kind == SCHEMA_TENSOR)
        printf(", \"min_rank\": %d, \"max_rank\": %d, \"leaf\": \"%s\"",
               row->min_rank, row->max_rank, leaf_names[row->leaf]);
    if (row->kind == SCHEMA_INTEGER)
        printf(", \"minimum\": %g", row->min);
    if (row->kind == SCHEMA_NUMBER)
        printf(", \"positive\": %s", row->positive ? "true" : "false");
    if (row->kind == SCHEMA_ENUM) {
        printf(", \"choices\": [");
        for (size_t i = 0; i < row->choice_count; i++)
            printf("%s\"%s\"", i ? ", " : "", row->choices[i].name);
        printf("]");
    }
    printf(", \"codes\": [\"%s\"",
           row->type_code ? row->type_code : "wrong_type");
    if (row->invalid_code)
        printf(", \"%s\"", row->invalid_code);
    printf("]");
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
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        printf("%s\"%s\"", s ? ", " : "", attn_stage_name((attn_stage)s));
    printf("]}\n");
    return 0;
}
