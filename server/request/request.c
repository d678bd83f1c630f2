#include "server/request/request.h"

#include <stdlib.h>
#include <string.h>

void api_labels_free(api_labels *labels)
{
    for (size_t i = 0; labels->names && i < labels->count; i++)
        free(labels->names[i]);
    free(labels->names);
    labels->names = NULL;
    labels->count = 0;
}

void api_request_free(api_request *req)
{
    free(req->x);
    free(req->context);
    free(req->w_q);
    free(req->w_k);
    free(req->w_v);
    free(req->w_o);
    free(req->bias);
    free(req->b_q);
    free(req->b_k);
    free(req->b_v);
    free(req->b_o);
    free(req->q);
    free(req->k);
    free(req->v);
    free(req->past_k);
    free(req->past_v);
    free(req->positions);
    free(req->context_positions);
    free(req->alibi_slopes);
    free(req->heads);
    free(req->allow);
    free(req->key_padding);
    api_labels_free(&req->tokens);
    api_labels_free(&req->context_tokens);
    memset(req, 0, sizeof *req);
}
