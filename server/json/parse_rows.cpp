/*
 * parse_rows.cpp - big number tensors parsed row by row in parallel (see
 * parse_rows.h for the design).
 */
#include "server/json/parse_rows.h"

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace
{

constexpr size_t NPOS = size_t(-1);

/* Text handed to one thread at a time: large enough that the hand-off is
 * noise next to parsing it, small enough that the last pieces still balance
 * the threads (docs/performance.md, "The server's constants"). */
constexpr size_t ROWS_CHUNK_BYTES = 64 * 1024;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_ws(const char *b, size_t i, size_t len)
{
    while (i < len && is_ws(b[i]))
        i++;
    return i;
}

/* The index after the string whose opening quote is at b[i], or NPOS.  A
 * backslash escapes the next byte, as in JSON; nothing else is checked
 * (simdjson checks the envelope). */
size_t skip_string(const char *b, size_t i, size_t len)
{
    for (i++; i < len; i++) {
        if (b[i] == '\\')
            i++;
        else if (b[i] == '"')
            return i + 1;
    }
    return NPOS;
}

/* The index after the value starting at b[i] (not whitespace), or NPOS:
 * strings to their closing quote, arrays and objects by bracket depth
 * outside strings, anything else up to the next delimiter.  Not validated:
 * the value stays in the envelope, which simdjson parses. */
size_t skip_value(const char *b, size_t i, size_t len)
{
    if (i >= len)
        return NPOS;
    if (b[i] == '"')
        return skip_string(b, i, len);
    if (b[i] != '[' && b[i] != '{') {
        while (i < len && !is_ws(b[i]) && b[i] != ',' && b[i] != '}' &&
               b[i] != ']')
            i++;
        return i;
    }
    size_t depth = 0;
    while (i < len) {
        char c = b[i];
        if (c == '"') {
            i = skip_string(b, i, len);
            if (i == NPOS)
                return NPOS;
            continue;
        }
        if (c == '[' || c == '{')
            depth++;
        else if ((c == ']' || c == '}') && --depth == 0)
            return i + 1;
        i++;
    }
    return NPOS;
}

/* One row's text: from its first number to its closing ']' (excluded). */
struct row_text {
    size_t begin, end;
};

/* A tensor field found by the scan: its value's extent in the body, its
 * shape but for the row width, and its rows in order. */
struct tensor_scan {
    int field = -1;
    size_t value_begin = 0, value_end = 0;
    int rank = -1;
    size_t dims[SCHEMA_MAX_RANK] = {0};
    std::vector<row_text> rows;
    size_t width = 0; /* numbers per row, from the first row */
    double *data = nullptr;
};

/* Scans the array at b[i] == '[' at this depth: nested arrays down to rows
 * of numbers, every array at a depth as long as the first.  Returns the
 * index after it, or NPOS when it is not such an array. */
size_t scan_array(const char *b, size_t i, size_t len, int depth, int max_rank,
                  tensor_scan &t)
{
    size_t j = skip_ws(b, i + 1, len);
    if (j >= len)
        return NPOS;
    if (b[j] != '[') { /* a row: numbers up to the first ']' */
        if (b[j] != '-' && (b[j] < '0' || b[j] > '9'))
            return NPOS; /* booleans, strings, empty: the usual path */
        if (depth + 1 > max_rank || (t.rank >= 0 && t.rank != depth + 1))
            return NPOS;
        t.rank = depth + 1;
        const char *close =
            static_cast<const char *>(std::memchr(b + j, ']', len - j));
        if (!close)
            return NPOS;
        t.rows.push_back({j, size_t(close - b)});
        return size_t(close - b) + 1;
    }
    if (depth + 1 >= max_rank)
        return NPOS;
    size_t count = 0;
    for (;;) {
        if (b[j] != '[')
            return NPOS;
        j = scan_array(b, j, len, depth + 1, max_rank, t);
        if (j == NPOS)
            return NPOS;
        count++;
        j = skip_ws(b, j, len);
        if (j >= len)
            return NPOS;
        if (b[j] == ']')
            break;
        if (b[j] != ',')
            return NPOS;
        j = skip_ws(b, j + 1, len);
        if (j >= len)
            return NPOS;
    }
    if (t.dims[depth] == 0)
        t.dims[depth] = count;
    return t.dims[depth] == count ? j + 1 : NPOS;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Parses the numbers of one row, b[r.begin .. r.end), into out (room for
 * `room`).  Returns how many, or NPOS when the text is not numbers separated
 * by commas or there are more than room.  std::from_chars reads a number
 * correctly rounded; JSON's grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?
 * [0-9]+)?, is stricter than what from_chars takes ("01", "1.", ".5",
 * "inf"), so those differences are checked around it: a digit first (after
 * an optional '-'), no leading zero, a digit after the '.'.  A number
 * from_chars cannot represent (overflow, underflow) is left to the usual
 * path. */
size_t parse_row(const char *b, row_text r, double *out, size_t room)
{
    const char *p = b + r.begin, *end = b + r.end;
    size_t count = 0;
    for (;;) {
        const char *digits = p + (p < end && *p == '-');
        if (digits == end || !is_digit(*digits) || count == room)
            return NPOS;
        if (*digits == '0' && digits + 1 < end && is_digit(digits[1]))
            return NPOS;
        std::from_chars_result res = std::from_chars(p, end, out[count]);
        if (res.ec != std::errc())
            return NPOS;
        const char *dot = static_cast<const char *>(
            std::memchr(digits, '.', size_t(res.ptr - digits)));
        if (dot && (dot + 1 == res.ptr || !is_digit(dot[1])))
            return NPOS;
        p = res.ptr;
        count++;
        while (p < end && is_ws(*p))
            p++;
        if (p == end)
            return count;
        if (*p != ',')
            return NPOS;
        p++;
        while (p < end && is_ws(*p))
            p++;
    }
}

/* A run of rows of one tensor, parsed by one thread. */
struct rows_chunk {
    tensor_scan *tensor;
    size_t first, last; /* rows [first, last) */
};

struct rows_job {
    const char *body;
    std::vector<rows_chunk> chunks;
    std::atomic<bool> failed{false};
};

void parse_chunk(void *ctx, size_t i, size_t worker)
{
    (void)worker;
    rows_job *job = static_cast<rows_job *>(ctx);
    const rows_chunk &c = job->chunks[i];
    tensor_scan &t = *c.tensor;
    for (size_t r = c.first; r < c.last; r++) {
        if (job->failed.load(std::memory_order_relaxed))
            return;
        if (parse_row(job->body, t.rows[r], t.data + r * t.width, t.width) !=
            t.width) {
            job->failed.store(true, std::memory_order_relaxed);
            return;
        }
    }
}

/* Finds the top-level fields; the number tensors at least min_bytes long
 * go to `found`, and envelope receives the body without them.  False when
 * the body is not an object this scan understands. */
bool scan_object(const char *b, size_t len, size_t min_bytes,
                 std::vector<tensor_scan> &found, std::string &envelope)
{
    size_t i = skip_ws(b, 0, len), copied = 0;
    if (i >= len || b[i] != '{')
        return false;
    i = skip_ws(b, i + 1, len);
    if (i < len && b[i] == '}')
        return false; /* nothing to split */
    bool split_already[API_FIELD_COUNT] = {false};
    for (;;) {
        if (i >= len || b[i] != '"')
            return false;
        size_t key_end = skip_string(b, i, len);
        if (key_end == NPOS)
            return false;
        std::string key(b + i + 1, key_end - i - 2);
        i = skip_ws(b, key_end, len);
        if (i >= len || b[i] != ':')
            return false;
        i = skip_ws(b, i + 1, len);
        int field = key.find('\\') == std::string::npos
                        ? schema_tensor_of(key.c_str())
                        : -1;
        if (field >= 0 && split_already[field])
            return false; /* twice: the usual path words the error */
        size_t value_end = NPOS;
        /* (whole numbers stay with simdjson's DOM, which tells how each
         * was written: whole_literals.h) */
        if (field >= 0 && api_schema[field].leaf != SCHEMA_LEAF_BOOL &&
            !api_schema[field].whole && i + 1 < len && b[i] == '[') {
            tensor_scan t;
            t.field = field;
            t.value_begin = i;
            value_end = scan_array(b, i, len, 0, api_schema[field].max_rank, t);
            if (value_end != NPOS && value_end - i >= min_bytes &&
                t.rank >= api_schema[field].min_rank) {
                t.value_end = value_end;
                envelope.append(b + copied, i - copied);
                envelope.append("0");
                copied = value_end;
                split_already[field] = true;
                found.push_back(std::move(t));
            } else {
                value_end = NPOS; /* stays in the envelope */
            }
        }
        if (value_end == NPOS)
            value_end = skip_value(b, i, len);
        if (value_end == NPOS)
            return false;
        i = skip_ws(b, value_end, len);
        if (i >= len)
            return false;
        if (b[i] == '}')
            break;
        if (b[i] != ',')
            return false;
        i = skip_ws(b, i + 1, len);
    }
    envelope.append(b + copied, len - copied);
    return !found.empty();
}

void free_scans(std::vector<tensor_scan> &found)
{
    for (tensor_scan &t : found) {
        std::free(t.data);
        t.data = nullptr;
    }
}

/* parse_rows_split() with the scans in `found`, so that an exception leaves
 * nothing allocated behind (the caller frees them). */
bool split_rows(const char *body, size_t len, size_t min_bytes, pool *workers,
                size_t *budget, raw_request *raw, std::string *envelope,
                size_t padding, std::vector<tensor_scan> &found)
{
    envelope->clear();
    if (!scan_object(body, len, min_bytes, found, *envelope))
        return false;
    /* the first row of each tensor says how wide all its rows are */
    size_t left = *budget;
    for (tensor_scan &t : found) {
        const row_text &first = t.rows[0];
        size_t most = (first.end - first.begin + 1) / 2; /* "0," per number */
        if (most > left)
            most = left;
        std::vector<double> row(most ? most : 1);
        size_t width = parse_row(body, first, row.data(), most);
        size_t total;
        if (width == NPOS || width == 0 ||
            __builtin_mul_overflow(width, t.rows.size(), &total) ||
            total > left) {
            free_scans(found);
            return false;
        }
        left -= total;
        t.width = width;
        t.data = static_cast<double *>(std::malloc(total * sizeof(double)));
        if (!t.data) {
            free_scans(found);
            return false;
        }
        std::memcpy(t.data, row.data(), width * sizeof(double));
    }
    rows_job job;
    job.body = body;
    for (tensor_scan &t : found) {
        size_t first = 1, bytes = 0;
        for (size_t r = 1; r < t.rows.size(); r++) {
            bytes += t.rows[r].end - t.rows[r].begin;
            if (bytes >= ROWS_CHUNK_BYTES || r + 1 == t.rows.size()) {
                job.chunks.push_back({&t, first, r + 1});
                first = r + 1;
                bytes = 0;
            }
        }
    }
    pool_parallel_for(workers, job.chunks.size(), parse_chunk, &job);
    if (job.failed.load()) {
        free_scans(found);
        return false;
    }
    for (tensor_scan &t : found) {
        schema_tensor *out = &raw->fields.tensor[t.field];
        out->present = true;
        out->is_bool = false;
        out->rank = t.rank;
        for (int d = 0; d < t.rank - 1; d++)
            out->dims[d] = t.dims[d];
        out->dims[t.rank - 1] = t.width;
        out->data = t.data;
        t.data = nullptr;
    }
    *budget = left;
    envelope->append(padding, ' ');
    return true;
}

} // namespace

bool parse_rows_split(const char *body, size_t len, size_t min_bytes,
                      pool *workers, size_t *budget, raw_request *raw,
                      std::string *envelope, size_t padding)
{
    std::vector<tensor_scan> found;
    try {
        return split_rows(body, len, min_bytes, workers, budget, raw, envelope,
                          padding, found);
    } catch (...) { /* std::bad_alloc: the usual path tries and reports */
        free_scans(found);
        return false;
    }
}
