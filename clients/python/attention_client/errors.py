"""AttentionError: every refusal of the server, whatever route it came from."""


class AttentionError(Exception):
    """The server refused a request.

    status  the HTTP status (400, 413, 422, ...)
    code    the stable machine code of docs/api.md's table (`shape_mismatch`),
            or None when the answer was not the service's own
    pointer an RFC 6901 JSON Pointer to the field at fault in /v1's terms
            (`/w_q`, `/mask`), or None
    detail  the human explanation
    """

    def __init__(self, status, code, pointer, detail):
        super().__init__(f"{status} {code}: {detail}"
                         + (f" (at {pointer})" if pointer else ""))
        self.status = status
        self.code = code
        self.pointer = pointer
        self.detail = detail
