/*
 * target.c - the request target's form, and its path (target.h).
 *
 * DESIGN
 * absolute-form is "http://" or "https://" (the scheme in any case, RFC
 * 3986 3.1), an authority up to the next '/', then the path.  RFC 9110
 * 4.2.1 and 4.2.4: an http URI with an empty host is invalid, and one with
 * userinfo ("user@host") is treated as an error; both are refused.  What is
 * neither a path, "*" nor such a URI (another scheme, a relative
 * reference) is refused as RFC 9112 3.2 asks (400).
 */
#include "server/http/target.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* RFC 3986 authority characters (host, port, IPv6 brackets), '@' left
 * out: userinfo is refused. */
static bool authority_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || (c && strchr("-._~!$&'()*+,;=:[]%", c));
}

/* The length of the scheme and "://" that starts target, or 0. */
static size_t http_scheme(const char *target)
{
    if (strncasecmp(target, "http://", 7) == 0)
        return 7;
    if (strncasecmp(target, "https://", 8) == 0)
        return 8;
    return 0;
}

target_form target_read(const char *target, const char **path, const char **why)
{
    *path = NULL;
    *why = NULL;
    if (target[0] == '/') {
        *path = target;
        return TARGET_PATH;
    }
    if (strcmp(target, "*") == 0)
        return TARGET_ASTERISK;
    size_t scheme = http_scheme(target);
    if (!scheme) {
        *why = "the request target is neither a path, \"*\" nor an http "
               "or https URI";
        return TARGET_INVALID;
    }
    const char *authority = target + scheme;
    size_t len = strcspn(authority, "/");
    if (len == 0 || authority[0] == ':') {
        *why = "the request target's URI has no host";
        return TARGET_INVALID;
    }
    for (size_t i = 0; i < len; i++)
        if (!authority_char(authority[i])) {
            *why = authority[i] == '@'
                       ? "the request target's URI holds a user name"
                       : "the request target's URI has an invalid host";
            return TARGET_INVALID;
        }
    *path = authority[len] ? authority + len : "/";
    return TARGET_PATH;
}
