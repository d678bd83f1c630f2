/*
 * static.c - GET / (the visualizer), GET /embed (one stage of a lesson,
 * for an iframe), GET /web/NAME (their stylesheets and modules) and GET
 * /openapi.yaml, built into the binary (server/web/assets.h).
 *
 * DESIGN
 * The bytes are static: the reply points at them, nothing is copied.  The
 * page may change with a new binary, so a browser revalidates it and its
 * assets (no-cache); the API description keeps the service-wide default.
 * Only /embed says who may frame it (--frame-ancestors).
 * An asset's type comes from its file name's extension: modules must be
 * served as JavaScript, or the browser refuses to run them.
 */
#include "server/api/endpoint.h"

#include "server/base/problem.h"
#include "server/web/assets.h"

#include <string.h>

#define WEB_PREFIX "/web/"

/* The Content-Type of each kind of asset the page has. */
static const struct {
    const char *extension;
    const char *type;
} asset_types[] = {
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
};

static const char *asset_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof asset_types / sizeof *asset_types; i++)
        if (strcmp(dot, asset_types[i].extension) == 0)
            return asset_types[i].type;
    return "application/octet-stream";
}

void api_static_index(const api_env *env, reply *out)
{
    (void)env;
    reply_set_static(out, 200, "text/html; charset=utf-8", asset_index_html,
                     asset_index_html_len);
    out->cache_control = "no-cache";
}

void api_static_embed(const api_env *env, reply *out)
{
    reply_set_static(out, 200, "text/html; charset=utf-8", asset_embed_html,
                     asset_embed_html_len);
    out->cache_control = "no-cache";
    out->frame_ancestors = env->frame_ancestors;
}

void api_static_web(const api_env *env, reply *out)
{
    const char *path = env->path ? env->path : "";
    const char *name = strncmp(path, WEB_PREFIX, strlen(WEB_PREFIX)) == 0
                           ? path + strlen(WEB_PREFIX)
                           : "";
    for (size_t i = 0; i < web_asset_count; i++)
        if (strcmp(web_assets[i].name, name) == 0) {
            reply_set_static(out, 200, asset_type(name), web_assets[i].bytes,
                             web_assets[i].len);
            out->cache_control = "no-cache";
            return;
        }
    problem_reply(out, ERR_NOT_FOUND, NULL,
                  "no file \"%.64s\" in the page's assets", name);
}

void api_static_openapi(const api_env *env, reply *out)
{
    (void)env;
    reply_set_static(out, 200, "application/yaml", asset_openapi_yaml,
                     asset_openapi_yaml_len);
}
