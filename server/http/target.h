/*
 * target.h - the request target (RFC 9112 3.2) as the path a route is
 * looked up by.
 *
 * A client speaking to an origin server sends the origin-form ("/v1/x");
 * one speaking to a proxy the absolute-form ("http://host/v1/x"), which a
 * server must accept all the same (3.2.2): its scheme and authority are cut
 * off, and the Host header is not read for the path.  "*" (the
 * asterisk-form, 3.2.4) names the server as a whole, for OPTIONS alone.
 * libmicrohttpd hands the target over as it came, its query cut off.
 */
#ifndef SERVER_HTTP_TARGET_H
#define SERVER_HTTP_TARGET_H

typedef enum {
    TARGET_PATH,     /* origin-form, or absolute-form with http(s) */
    TARGET_ASTERISK, /* "*": the server as a whole */
    TARGET_INVALID,  /* anything else: 400 */
} target_form;

/* The form of `target` (as the access handler got it); for TARGET_PATH
 * *path points to its path (into target, or a static "/" when an
 * absolute-form has none), for TARGET_INVALID *why says what is wrong. */
target_form target_read(const char *target, const char **path,
                        const char **why);

#endif
