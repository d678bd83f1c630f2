"""The three lessons of ../shared/seeds, transcribed: each function runs the
lesson's own NumPy code and returns (request body for the service, what the
lesson computes).  Kept apart from the service's code on purpose."""
import numpy as np


def lesson_000():
    """Multi-head attention with per-head weight stacks (Spanish lesson)."""
    x = np.array([
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
        [0.6, 0.5, 0.4, 0.3, 0.2, 0.1],
        [0.2, 0.1, 0.4, 0.3, 0.6, 0.5],
    ])
    num_heads = 2
    embed_size = x.shape[1]
    head_dim = embed_size // num_heads
    np.random.seed(42)
    W_q = np.random.randn(num_heads, embed_size, head_dim)
    W_k = np.random.randn(num_heads, embed_size, head_dim)
    W_v = np.random.randn(num_heads, embed_size, head_dim)
    attention_outputs = []
    for head in range(num_heads):
        Q = x @ W_q[head]
        K = x @ W_k[head]
        V = x @ W_v[head]
        scores = Q @ K.T / np.sqrt(head_dim)
        attention_weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1,
                                                    keepdims=True)
        head_output = attention_weights @ V
        attention_outputs.append(head_output)
    multi_head_output = np.concatenate(attention_outputs, axis=-1)
    request = {"x": x.tolist(), "w_q": W_q.tolist(), "w_k": W_k.tolist(),
               "w_v": W_v.tolist(), "num_heads": num_heads,
               "return": ["head_outputs", "output"]}
    return request, {"head_outputs": np.stack(attention_outputs),
                     "output": multi_head_output}


def lesson_001():
    """Single-head self-attention, step by step (Italian lesson)."""
    X = np.array([
        [1.0, 0.0, 1.0, 0.0],
        [0.0, 2.0, 0.0, 2.0],
        [1.0, 1.0, 1.0, 1.0],
    ])
    W_q = np.array([[0.1, 0.2, 0.0, 0.0], [0.0, 0.1, 0.3, 0.0],
                    [0.1, 0.0, 0.0, 0.2], [0.0, 0.0, 0.2, 0.3]])
    W_k = np.array([[0.2, 0.0, 0.1, 0.0], [0.0, 0.1, 0.0, 0.3],
                    [0.1, 0.0, 0.2, 0.0], [0.0, 0.2, 0.0, 0.1]])
    W_v = np.array([[0.0, 0.1, 0.0, 0.2], [0.2, 0.0, 0.2, 0.0],
                    [0.0, 0.3, 0.1, 0.0], [0.1, 0.0, 0.0, 0.3]])
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    scores = Q @ K.T
    d_k = Q.shape[1]
    scaled_scores = scores / np.sqrt(d_k)

    def softmax(x):
        e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e_x / np.sum(e_x, axis=-1, keepdims=True)

    attention_weights = softmax(scaled_scores)
    output = attention_weights @ V
    request = {"x": X.tolist(), "w_q": W_q.tolist(), "w_k": W_k.tolist(),
               "w_v": W_v.tolist()}
    return request, {"q": Q[None], "k": K[None], "v": V[None],
                     "scores": scores[None], "scaled_scores": scaled_scores[None],
                     "weights": attention_weights[None], "output": output}


def lesson_002():
    """Multi-head attention by reshaping one projection (Turkish lesson)."""
    def softmax(z, eksen=-1):
        e = np.exp(z - z.max(axis=eksen, keepdims=True))
        return e / e.sum(axis=eksen, keepdims=True)

    rng = np.random.default_rng(0)
    n, d, h = 5, 8, 2
    X = rng.normal(size=(n, d))
    W_q, W_k, W_v = rng.normal(size=(3, d, d))
    bol = lambda M: M.reshape(n, h, d // h).transpose(1, 0, 2)  # noqa: E731
    Qh, Kh, Vh = bol(X @ W_q), bol(X @ W_k), bol(X @ W_v)
    A = softmax(Qh @ Kh.transpose(0, 2, 1) / np.sqrt(d // h), eksen=-1)
    Y = (A @ Vh).transpose(1, 0, 2).reshape(n, d)
    solution = Y
    # its text writes the same steps in its own names (skor, Yh)
    skor = Qh @ Kh.transpose(0, 2, 1) / np.sqrt(d // h)
    Yh = softmax(skor) @ Vh
    Y = Yh.transpose(1, 0, 2).reshape(n, d)
    assert np.allclose(Y, solution), "the lesson's text and its solution differ"
    request = {"x": X.tolist(), "w_q": W_q.tolist(), "w_k": W_k.tolist(),
               "w_v": W_v.tolist(), "num_heads": h,
               "return": ["output"]}
    return request, {"q": Qh, "weights": A, "output": Y}


LESSONS = {"000": lesson_000, "001": lesson_001, "002": lesson_002}
