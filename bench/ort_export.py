"""ort_export.py: a random-weight BERT encoder of the MiniLM-L12 shape, as
ONNX, for bench/bench_encoder_ort.sh (ONNX Runtime's side of the race).

The model is the one bench/bench_embed.c builds for cairn: 12 post-LayerNorm
layers, hidden 384, 12 heads, FFN 1536 with erf GELU, vocab 30522, mean
pooling over the attention mask. Weights are N(0, 0.02); only the shape
matters for speed. Written with Debian's python3-torch, exported with
opset 14 and dynamic batch / sequence axes.

usage: /usr/bin/python3 bench/ort_export.py OUT.onnx [--layers 12]
"""
import math
import sys

import torch
from torch import nn

H, HEADS, INTER, VOCAB, MAXPOS = 384, 12, 1536, 30522, 512


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(H, H) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(H, eps=1e-12), nn.LayerNorm(H, eps=1e-12)
        self.up, self.down = nn.Linear(H, INTER), nn.Linear(INTER, H)

    def forward(self, x, bias):
        b, s, _ = x.shape
        dh = H // HEADS
        q = self.q(x).view(b, s, HEADS, dh).transpose(1, 2)
        k = self.k(x).view(b, s, HEADS, dh).transpose(1, 2)
        v = self.v(x).view(b, s, HEADS, dh).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + bias, dim=-1) @ v
        x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, s, H)))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class Encoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.word, self.pos, self.ttype = nn.Embedding(VOCAB, H), nn.Embedding(MAXPOS, H), nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H, eps=1e-12)
        self.layers = nn.ModuleList(Layer() for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.ttype.weight[0])
        m = attention_mask.to(torch.float32)
        bias = ((1.0 - m) * -10000.0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, bias)
        return (x * m[..., None]).sum(1) / m.sum(1, keepdim=True)


def main():
    out = sys.argv[1]
    layers = int(sys.argv[sys.argv.index("--layers") + 1]) if "--layers" in sys.argv else 12
    torch.manual_seed(0)
    model = Encoder(layers).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    ids = torch.randint(5, 30000, (2, 16))
    mask = torch.ones_like(ids)
    torch.onnx.export(model, (ids, mask), out, opset_version=14,
                      input_names=["input_ids", "attention_mask"], output_names=["sentence_embedding"],
                      dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}})


main()
