"""Result: what one request returned, NumPy arrays by stage name."""
from .html import result_html, share_link
from .fields import v1_body


class Result:
    """result["weights"] is the stage as a NumPy array (read-only, the
    reply's own bytes); .shapes gives each returned stage's shape;
    .parameters what the server used (num_heads, head_dim, value_dim, scale,
    causal) and the dtype; .tokens and .context_tokens the labels sent."""

    def __init__(self, arrays, parameters, fields, base_url):
        self._arrays = arrays
        self.parameters = dict(parameters)
        self.shapes = {name: tuple(a.shape) for name, a in arrays.items()}
        self.tokens = fields.get("tokens")
        self.context_tokens = fields.get("context_tokens")
        self.request_fields = fields  # as the caller gave them
        self._base_url = base_url

    def __getitem__(self, stage):
        return self._arrays[stage]

    def __contains__(self, stage):
        return stage in self._arrays

    def __iter__(self):
        return iter(self._arrays)

    def keys(self):
        return self._arrays.keys()

    def __repr__(self):
        shapes = ", ".join(f"{k}{list(v)}" for k, v in self.shapes.items())
        return f"<Result {shapes} {self.parameters}>"

    @property
    def request(self):
        """/v1's JSON body of this request (nested lists), stages included."""
        return v1_body(self.request_fields, list(self._arrays))

    def share_link(self, limit=None):
        """The server's page at this request (its #state= link); None when
        it would be longer than limit characters."""
        return share_link(self._base_url,
                          v1_body(self.request_fields, arrays=True), limit)

    def _repr_html_(self):
        return result_html(self)
