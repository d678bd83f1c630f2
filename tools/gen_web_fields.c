/*
 * gen_web_fields.c - build tool: prints the visualizer's module of request
 * fields (web/fields.js) from the server's schema table (api_schema[],
 * server/request/schema.c) and the core's stages (core/stages.c), so the
 * page's lists are the server's: a new schema row appears in the page's
 * error slots, state and resets, and a new stage in its lists, without
 * being typed there again.
 *
 *   gen_web_fields > build/gen/web/fields.js
 */
#include "core/attention.h"
#include "server/request/schema.h"

#include <stdio.h>
#include <string.h>

/* One row as a JS object literal: { name, kind, required[, choices] }. */
static void print_field(const schema_field *row)
{
    printf("  { name: \"%s\", kind: \"%s\", required: %s", row->name,
           schema_kind_name(row->kind), row->required ? "true" : "false");
    if (row->kind == SCHEMA_ENUM) {
        printf(", choices: [");
        for (size_t i = 0; i < row->choice_count; i++)
            printf("%s\"%s\"", i ? ", " : "", row->choices[i].name);
        printf("]");
    }
    if (row->kind == SCHEMA_OBJECT) {
        printf(", members: [");
        for (size_t i = 0; i < row->member_count; i++)
            printf("%s\"%s\"", i ? ", " : "", row->members[i].name);
        printf("]");
    }
    printf(" },\n");
}

/* The sizes a stage's shape is made of, each given a value no other size
 * or product has, so that a shape read from attn_stage_shape names them. */
enum {
    H = 6,
    H_KV = 2,
    N = 3,
    M = 11,
    PAST = 4,
    D = 13,
    D_K = 17,
    D_V = 19,
    D_OUT = 23
};
static const struct {
    const char *name;
    size_t value;
} sizes[] = {
    {"h", H},          {"h_kv", H_KV},      {"n", N},
    {"m", M},          {"m_new", M - PAST}, {"d", D},
    {"d_k", D_K},      {"d_v", D_V},        {"d_out", D_OUT},
    {"h·d_v", H *D_V},
};

/* What a request gives that attn_stage_applies reads: the page names the
 * conditions a stage needs (the sinusoidal positional_encoding, an x, rope)
 * and checks them against the body it sends. */
static const char *const conditions[] = {"sinusoidal", "x", "rope"};
#define CONDITION_COUNT 3

/* A problem of those sizes with the conditions in `on` (bit i: conditions[i]).
 */
static attn_problem probe(unsigned on)
{
    static const double cell;
    attn_problem p = {.n = N,
                      .m = M,
                      .past = PAST,
                      .d = D,
                      .d_c = D,
                      .heads = H,
                      .kv_heads = H_KV,
                      .d_k = D_K,
                      .d_v = D_V,
                      .d_out = D_OUT,
                      .w_o = &cell};
    p.sinusoidal = on & 1;
    p.x = on & 2 ? &cell : NULL;
    p.rope_dims = on & 4 ? 2 : 0;
    return p;
}

/* Stage s's sizes by name (three at most, "" past its rank); its rank, or
 * -1 when a size has no name. */
static int stage_sizes(attn_stage s, const char *names[3])
{
    attn_problem p = probe((1u << CONDITION_COUNT) - 1);
    size_t dims[ATTN_MAX_RANK];
    int rank = attn_stage_shape(&p, s, dims);
    for (int i = 0; i < 3; i++) {
        names[i] = i < rank ? NULL : "";
        for (size_t k = 0; i < rank && k < sizeof sizes / sizeof sizes[0]; k++)
            if (sizes[k].value == dims[i])
                names[i] = sizes[k].name;
        if (!names[i])
            return -1;
    }
    return rank;
}

/* The conditions stage s needs (bit i: conditions[i]); the rule must be
 * their conjunction, or the page could not check it from the list. */
static bool stage_needs(attn_stage s, unsigned *needs)
{
    unsigned all = (1u << CONDITION_COUNT) - 1;
    attn_problem p = probe(all);
    *needs = 0;
    for (int c = 0; c < CONDITION_COUNT; c++) {
        attn_problem without = probe(all & ~(1u << c));
        if (!attn_stage_applies(&without, s))
            *needs |= 1u << c;
    }
    if (!attn_stage_applies(&p, s))
        return false;
    for (unsigned on = 0; on <= all; on++) {
        p = probe(on);
        if (attn_stage_applies(&p, s) != ((on & *needs) == *needs))
            return false;
    }
    return true;
}

/* The page's lists of stages by shape: a stage is in one when its shape
 * has `rank` sizes (0: any) and its first ones are those named (NULL: any). */
static const struct {
    const char *name, *about;
    int rank;
    const char *first[3];
} stage_lists[] = {
    {"PER_HEAD_STAGES", "one plane per head (h or h_kv)", 3, {NULL}},
    {"KV_STAGES",
     "one per key/value head (h_kv: grouped-query attention "
     "shares them)",
     0,
     {"h_kv"}},
    {"PAIR_STAGES",
     "(h, n, m): a number for every query and key",
     0,
     {"h", "n", "m"}},
    {"CACHE_STAGES",
     "(h_kv, m, ...): every key or value, the cached ones "
     "first",
     0,
     {"h_kv", "m"}},
};

/* List l of stage_lists as a JS array; false when a size has no name. */
static bool print_stage_list(size_t l)
{
    printf("// %s;\nexport const %s = [", stage_lists[l].about,
           stage_lists[l].name);
    const char *sep = "";
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        const char *names[3];
        int rank = stage_sizes((attn_stage)s, names);
        if (rank < 0)
            return false;
        bool in = !stage_lists[l].rank || rank == stage_lists[l].rank;
        for (int i = 0; i < 3; i++)
            if (stage_lists[l].first[i] &&
                strcmp(stage_lists[l].first[i], names[i]))
                in = false;
        if (in) {
            printf("%s\"%s\"", sep, attn_stage_name((attn_stage)s));
            sep = ", ";
        }
    }
    printf("];\n");
    return true;
}

/* The conditions of every stage that has any, as a JS object. */
static bool print_needs(void)
{
    printf("// What a stage needs of a request (attn_stage_applies, "
           "core/stages.c), all of it;\n// a stage not named is always "
           "computed.  The conditions: the sinusoidal\n"
           "// positional_encoding, an x, rope.\n"
           "export const STAGE_NEEDS = {");
    const char *sep = " ";
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        unsigned needs;
        if (!stage_needs((attn_stage)s, &needs))
            return false;
        if (!needs)
            continue;
        printf("%s%s: [", sep, attn_stage_name((attn_stage)s));
        for (int c = 0, k = 0; c < CONDITION_COUNT; c++)
            if (needs & (1u << c))
                printf("%s\"%s\"", k++ ? ", " : "", conditions[c]);
        printf("]");
        sep = ", ";
    }
    printf(" };\n");
    return true;
}

/* The stage lists the page reads, from the core's shapes and its rule. */
static bool print_stage_lists(void)
{
    printf("// Every stage the core computes, in its order.\n"
           "export const CORE_STAGES = [");
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        printf("%s\"%s\"", s ? ", " : "", attn_stage_name((attn_stage)s));
    printf("];\n// The stages by their shapes in one sequence "
           "(attn_stage_shape, core/stages.c):\n");
    for (size_t l = 0; l < sizeof stage_lists / sizeof stage_lists[0]; l++)
        if (!print_stage_list(l))
            return false;
    return print_needs();
}

int main(void)
{
    printf("// generated by tools/gen_web_fields.c from api_schema[] "
           "(server/request/schema.c); do not edit\n"
           "// Every field of POST v1/attention's body, in the schema's "
           "order.\n"
           "export const REQUEST_FIELDS = [\n");
    for (int f = 0; f < API_FIELD_COUNT; f++)
        print_field(&api_schema[f]);
    printf("];\n");
    if (!print_stage_lists()) {
        fprintf(stderr, "gen_web_fields: a stage's shape or rule is one this "
                        "tool cannot name (see sizes[] and conditions[])\n");
        return 1;
    }
    return ferror(stdout) ? 1 : 0;
}
