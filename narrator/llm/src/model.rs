//! The llama architecture's forward pass (SmolLM2 is one): token embedding, for each layer
//! RMSNorm, attention with rotary positions and grouped key/value heads, RMSNorm and a SwiGLU
//! feed-forward, then the final norm and the output head; greedy decoding over it.
//!
//! It owns the model's shape read from the GGUF metadata, the weights as matrices over the
//! file's bytes, and a [`Session`]: the key/value cache of one context and the buffers a step
//! writes into, all allocated once at its start (nothing grows while it decodes). It must not
//! sample: the next token is the argmax (the lowest id on a tie), so a prompt has one answer.

use crate::Error;
use crate::gguf::{DType, Gguf};
use crate::kernels;
use crate::limits::CONTEXT_TOKENS_MAX;
use crate::quant::{Activations, BLOCK, Matrix};

/// The model's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub dim: usize,
    pub hidden_dim: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub vocab: usize,
    pub rope_base: f64,
    pub norm_eps: f32,
}

struct Layer<'w> {
    attn_norm: Vec<f32>,
    wq: Matrix<'w>,
    wk: Matrix<'w>,
    wv: Matrix<'w>,
    wo: Matrix<'w>,
    ffn_norm: Vec<f32>,
    gate: Matrix<'w>,
    up: Matrix<'w>,
    down: Matrix<'w>,
}

/// A llama model over a GGUF file's bytes.
pub struct Model<'w> {
    pub config: Config,
    embedding: Matrix<'w>,
    layers: Vec<Layer<'w>>,
    out_norm: Vec<f32>,
    /// `output.weight`, or the embedding when the file ties them (SmolLM2 does).
    output: Matrix<'w>,
}

fn positive(g: &Gguf, key: &str) -> Result<usize, Error> {
    let n = g.int(key)?;
    if n <= 0 || n > 1 << 20 {
        return Err(Error::Format(format!("{key} = {n}")));
    }
    Ok(n as usize)
}

impl<'w> Model<'w> {
    /// The model in `g`, whose shape and tensors are checked against each other.
    pub fn from_gguf(g: &Gguf<'w>) -> Result<Model<'w>, Error> {
        match g.get("general.architecture") {
            Some(crate::gguf::Value::Str(b"llama")) => {}
            _ => return Err(Error::Format("general.architecture is not llama".into())),
        }
        let dim = positive(g, "llama.embedding_length")?;
        let heads = positive(g, "llama.attention.head_count")?;
        let kv_heads = positive(g, "llama.attention.head_count_kv")?;
        // A head is rotated in pairs and read in fours (the kernels' lanes).
        if dim % heads != 0 || heads % kv_heads != 0 || (dim / heads) % 4 != 0 {
            return Err(Error::Format(format!(
                "{dim} wide with {heads} heads over {kv_heads} key/value heads"
            )));
        }
        let head_dim = dim / heads;
        if let Ok(rope) = g.int("llama.rope.dimension_count")
            && rope as usize != head_dim
        {
            return Err(Error::Format(format!(
                "rotary positions over {rope} of a head's {head_dim} dimensions"
            )));
        }
        let embedding = Matrix::of(g.tensor("token_embd.weight")?);
        let config = Config {
            dim,
            hidden_dim: positive(g, "llama.feed_forward_length")?,
            layers: positive(g, "llama.block_count")?,
            heads,
            kv_heads,
            head_dim,
            vocab: embedding.rows,
            rope_base: g.float("llama.rope.freq_base").unwrap_or(10_000.0),
            norm_eps: g.float("llama.attention.layer_norm_rms_epsilon")? as f32,
        };
        let kv_dim = kv_heads * head_dim;
        let matrix = |name: &str, rows: usize, cols: usize| -> Result<Matrix<'w>, Error> {
            let m = Matrix::of(g.tensor(name)?);
            if m.rows != rows || m.cols != cols || !m.cols.is_multiple_of(BLOCK) {
                return Err(Error::Format(format!(
                    "{name} is {}×{}, not {rows}×{cols}",
                    m.rows, m.cols
                )));
            }
            Ok(m)
        };
        let vector = |name: &str| -> Result<Vec<f32>, Error> {
            let t = g.tensor(name)?;
            if t.dtype != DType::F32 || t.dims != [dim as u64] {
                return Err(Error::Format(format!("{name} is not {dim} f32s")));
            }
            let mut v = vec![0f32; dim];
            Matrix::of(t).dequantize_row(0, &mut v);
            Ok(v)
        };
        let embedding = matrix("token_embd.weight", config.vocab, dim)?;
        let mut layers = Vec::with_capacity(config.layers);
        for l in 0..config.layers {
            let p = |part: &str| format!("blk.{l}.{part}.weight");
            layers.push(Layer {
                attn_norm: vector(&p("attn_norm"))?,
                wq: matrix(&p("attn_q"), dim, dim)?,
                wk: matrix(&p("attn_k"), kv_dim, dim)?,
                wv: matrix(&p("attn_v"), kv_dim, dim)?,
                wo: matrix(&p("attn_output"), dim, dim)?,
                ffn_norm: vector(&p("ffn_norm"))?,
                gate: matrix(&p("ffn_gate"), config.hidden_dim, dim)?,
                up: matrix(&p("ffn_up"), config.hidden_dim, dim)?,
                down: matrix(&p("ffn_down"), dim, config.hidden_dim)?,
            });
        }
        let output = match g.tensor("output.weight") {
            Ok(_) => matrix("output.weight", config.vocab, dim)?,
            Err(_) => embedding,
        };
        Ok(Model {
            out_norm: vector("output_norm.weight")?,
            config,
            embedding,
            layers,
            output,
        })
    }
}

/// One context being decoded: its key/value cache and scratch, sized at the start.
pub struct Session<'m, 'w> {
    model: &'m Model<'w>,
    pos: usize,
    keys: Vec<f32>,
    values: Vec<f32>,
    /// cos and sin of each position's angle for each pair of a head's dimensions.
    rope: Vec<(f32, f32)>,
    x: Vec<f32>,
    xb: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    att: Vec<f32>,
    scores: Vec<f32>,
    h1: Vec<f32>,
    h2: Vec<f32>,
    /// The vector the next matrices multiply.
    xq: Activations,
    logits: Vec<f32>,
}

impl<'m, 'w> Session<'m, 'w> {
    /// A fresh context of up to [`CONTEXT_TOKENS_MAX`] tokens.
    pub fn new(model: &'m Model<'w>) -> Session<'m, 'w> {
        let c = &model.config;
        let kv_dim = c.kv_heads * c.head_dim;
        let pairs = c.head_dim / 2;
        let freqs: Vec<f64> = (0..pairs)
            .map(|i| c.rope_base.powf(-2.0 * i as f64 / c.head_dim as f64))
            .collect();
        let mut rope = Vec::with_capacity(CONTEXT_TOKENS_MAX * pairs);
        for pos in 0..CONTEXT_TOKENS_MAX {
            for freq in &freqs {
                let angle = pos as f64 * freq;
                rope.push((angle.cos() as f32, angle.sin() as f32));
            }
        }
        Session {
            model,
            pos: 0,
            keys: vec![0.0; c.layers * CONTEXT_TOKENS_MAX * kv_dim],
            values: vec![0.0; c.layers * CONTEXT_TOKENS_MAX * kv_dim],
            rope,
            x: vec![0.0; c.dim],
            xb: vec![0.0; c.dim],
            q: vec![0.0; c.dim],
            k: vec![0.0; kv_dim],
            v: vec![0.0; kv_dim],
            att: vec![0.0; c.dim],
            scores: vec![0.0; CONTEXT_TOKENS_MAX],
            h1: vec![0.0; c.hidden_dim],
            h2: vec![0.0; c.hidden_dim],
            xq: Activations::default(),
            logits: vec![0.0; c.vocab],
        }
    }

    /// Tokens taken so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Takes `token` at the next position and returns the logits for the one after it.
    pub fn step(&mut self, token: u32) -> Result<&[f32], Error> {
        self.forward(token, true)?;
        Ok(&self.logits)
    }

    /// Reads `token` into the cache without computing its logits: a prompt's tokens before its
    /// last, whose next-token scores nobody reads (the output projection is a fifth of a
    /// step's weights).
    pub fn feed(&mut self, token: u32) -> Result<(), Error> {
        self.forward(token, false)
    }

    fn forward(&mut self, token: u32, logits: bool) -> Result<(), Error> {
        let m = self.model;
        let c = &m.config;
        if token as usize >= c.vocab {
            return Err(Error::Token(token));
        }
        if self.pos >= CONTEXT_TOKENS_MAX {
            return Err(Error::TooLong {
                what: "context",
                len: self.pos + 1,
                max: CONTEXT_TOKENS_MAX,
            });
        }
        let pos = self.pos;
        let kv_dim = c.kv_heads * c.head_dim;
        let group = c.heads / c.kv_heads;
        let scale = 1.0 / (c.head_dim as f32).sqrt();
        m.embedding.dequantize_row(token as usize, &mut self.x);
        for (l, layer) in m.layers.iter().enumerate() {
            rms_norm(&self.x, &layer.attn_norm, c.norm_eps, &mut self.xb);
            self.xq.prepare(&self.xb);
            layer.wq.mul_vec(&self.xq, &mut self.q);
            layer.wk.mul_vec(&self.xq, &mut self.k);
            layer.wv.mul_vec(&self.xq, &mut self.v);
            let angles = &self.rope[pos * c.head_dim / 2..(pos + 1) * c.head_dim / 2];
            rotate(&mut self.q, c.head_dim, angles);
            rotate(&mut self.k, c.head_dim, angles);
            let base = l * CONTEXT_TOKENS_MAX * kv_dim;
            self.keys[base + pos * kv_dim..base + (pos + 1) * kv_dim].copy_from_slice(&self.k);
            self.values[base + pos * kv_dim..base + (pos + 1) * kv_dim].copy_from_slice(&self.v);
            for h in 0..c.heads {
                let q = &self.q[h * c.head_dim..(h + 1) * c.head_dim];
                let kv = (h / group) * c.head_dim;
                let scores = &mut self.scores[..=pos];
                for (t, s) in scores.iter_mut().enumerate() {
                    let at = base + t * kv_dim + kv;
                    *s = kernels::dot_f32(q, &self.keys[at..at + c.head_dim]) * scale;
                }
                softmax(scores);
                let out = &mut self.att[h * c.head_dim..(h + 1) * c.head_dim];
                out.fill(0.0);
                for (t, p) in scores.iter().enumerate() {
                    let at = base + t * kv_dim + kv;
                    kernels::add_scaled(out, *p, &self.values[at..at + c.head_dim]);
                }
            }
            self.xq.prepare(&self.att);
            layer.wo.mul_vec(&self.xq, &mut self.xb);
            add(&mut self.x, &self.xb);
            rms_norm(&self.x, &layer.ffn_norm, c.norm_eps, &mut self.xb);
            self.xq.prepare(&self.xb);
            layer.gate.mul_vec(&self.xq, &mut self.h1);
            layer.up.mul_vec(&self.xq, &mut self.h2);
            for (g, u) in self.h1.iter_mut().zip(&self.h2) {
                *g = *g / (1.0 + (-*g).exp()) * u;
            }
            self.xq.prepare(&self.h1);
            layer.down.mul_vec(&self.xq, &mut self.xb);
            add(&mut self.x, &self.xb);
        }
        if logits {
            rms_norm(&self.x, &m.out_norm, c.norm_eps, &mut self.xb);
            self.xq.prepare(&self.xb);
            m.output.mul_vec(&self.xq, &mut self.logits);
        }
        self.pos += 1;
        Ok(())
    }

    /// Takes every token of `prompt`, then appends the argmax until `stop` is chosen, `max_new`
    /// tokens were chosen, or the context is full. Returns the chosen tokens (without `stop`).
    pub fn generate(
        &mut self,
        prompt: &[u32],
        max_new: usize,
        stop: &[u32],
    ) -> Result<Vec<u32>, Error> {
        let Some((last, first)) = prompt.split_last() else {
            return Err(Error::Format("an empty prompt".into()));
        };
        for t in first {
            self.feed(*t)?;
        }
        let mut next = argmax(self.step(*last)?);
        let mut out = Vec::new();
        while out.len() < max_new && !stop.contains(&next) {
            out.push(next);
            if out.len() == max_new || self.pos >= CONTEXT_TOKENS_MAX {
                break;
            }
            next = argmax(self.step(next)?);
        }
        Ok(out)
    }
}

/// The index of the largest value, the lowest on a tie (NaNs never win, on any machine).
pub fn argmax(values: &[f32]) -> u32 {
    let mut best = 0;
    for (i, v) in values.iter().enumerate() {
        if *v > values[best] {
            best = i;
        }
    }
    best as u32
}

fn add(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

fn rms_norm(x: &[f32], weight: &[f32], eps: f32, out: &mut [f32]) {
    let mean_square = kernels::dot_f32(x, x) / x.len() as f32;
    let inv = 1.0 / (mean_square + eps).sqrt();
    for ((o, x), w) in out.iter_mut().zip(x).zip(weight) {
        *o = x * inv * w;
    }
}

/// Rotary positions as llama.cpp's GGUF llama has them: each head's dimensions (2i, 2i+1)
/// turned by the position's angle for pair i.
fn rotate(v: &mut [f32], head_dim: usize, angles: &[(f32, f32)]) {
    for head in v.chunks_exact_mut(head_dim) {
        for (pair, (cos, sin)) in head.chunks_exact_mut(2).zip(angles) {
            let (a, b) = (pair[0], pair[1]);
            pair[0] = a * cos - b * sin;
            pair[1] = a * sin + b * cos;
        }
    }
}

fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0f32;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        total += *v;
    }
    for v in x.iter_mut() {
        *v /= total;
    }
}
