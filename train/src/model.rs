//! The policy: a small decoder-only transformer (pre-norm, causal self-attention, GELU MLP)
//! over the tokens of [`crate::tokens`], with one embedding table per token feature (kind, row,
//! column, role, time, cost-to-go, and the five moves' statuses) summed into the input, and a
//! head over the [`NUM_OUT`] answer tokens.
//!
//! No parameter is indexed by an agent's number. Attention tells agents apart by relation only:
//! each head adds a learned bias to the score of query token q on key token k, chosen by whether
//! both are about agents and the same one (same / other / either about none) and by how their
//! time steps compare (k − q clamped to −2..=2, or either without time). What a model learns of
//! "another agent at the next time step" on 2-agent boards is the same parameter on 5-agent
//! boards.
//!
//! It is the "LLM" of floe at a scale a CPU trains in minutes; the paper starts from a
//! pretrained language model (Qwen3-4B) instead, which floe replaces by a supervised warm start
//! on the generator's optimal plans.
//!
//! Two forward paths with the same arithmetic: [`Policy::forward`] over whole padded sequences
//! (teacher forcing, GRPO log-probabilities) and [`Policy::prefill`] + [`Policy::step`] with a
//! key/value cache (decoding).

use serde::{Deserialize, Serialize};
use tch::nn;
use tch::{Device, Kind, Tensor};

use crate::error::TrainError;
use crate::tokens::{kind, role, status, Layout, Sequence, Token, NUM_OUT};

/// The network's shape (serde; every field has a default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Width of the residual stream. Default 128.
    pub d_model: i64,
    /// Transformer blocks. Default 4.
    pub layers: i64,
    /// Attention heads (must divide `d_model`). Default 4.
    pub heads: i64,
    /// Hidden width of the MLP. Default 512.
    pub d_ff: i64,
    /// What the embedding tables cover. Default: maps up to 10×10, 64 time steps (and
    /// distances).
    pub layout: Layout,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig { d_model: 128, layers: 4, heads: 4, d_ff: 512, layout: Layout::new(10, 64) }
    }
}

impl ModelConfig {
    /// Checks the shape.
    ///
    /// # Errors
    /// [`TrainError::Input`] naming the bad field.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |m: &str| Err(TrainError::Input(format!("model: {m}")));
        if self.d_model < 8 || self.layers < 1 || self.heads < 1 || self.d_ff < 1 {
            return bad("d_model must be at least 8, layers, heads and d_ff at least 1");
        }
        if self.d_model % self.heads != 0 {
            return bad("heads must divide d_model");
        }
        let l = &self.layout;
        if !(2..=256).contains(&l.max_side) || !(2..=4096).contains(&l.max_time) {
            return bad("layout: max_side in 2..=256, max_time in 2..=4096");
        }
        Ok(())
    }
}

// The layers hold their variables themselves, made by tch's `nn` constructors (their
// initialisation and variable names), so that `Policy::handle` can share them.

/// `x · wᵀ + b`, as `nn::Linear`.
#[derive(Debug)]
struct Linear {
    ws: Tensor,
    bs: Option<Tensor>,
}

impl Linear {
    fn new(path: nn::Path<'_>, input: i64, output: i64) -> Self {
        let l = nn::linear(path, input, output, Default::default());
        Linear { ws: l.ws, bs: l.bs }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.linear(&self.ws, self.bs.as_ref())
    }

    fn share(&self) -> Self {
        Linear { ws: self.ws.shallow_clone(), bs: self.bs.as_ref().map(Tensor::shallow_clone) }
    }
}

/// Layer normalisation over the last dimension with a weight and a bias, as `nn::LayerNorm`.
#[derive(Debug)]
struct LayerNorm {
    ws: Tensor,
    bs: Tensor,
}

impl LayerNorm {
    fn new(path: nn::Path<'_>, d: i64) -> Self {
        let l = nn::layer_norm(path, vec![d], Default::default());
        match (l.ws, l.bs) {
            (Some(ws), Some(bs)) => LayerNorm { ws, bs },
            _ => unreachable!("an affine layer norm has a weight and a bias"),
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        let eps = nn::LayerNormConfig::default().eps;
        Tensor::layer_norm(x, self.ws.size(), Some(&self.ws), Some(&self.bs), eps, true)
    }

    fn share(&self) -> Self {
        LayerNorm { ws: self.ws.shallow_clone(), bs: self.bs.shallow_clone() }
    }
}

/// A lookup table, as `nn::Embedding` (no padding index).
#[derive(Debug)]
struct Embedding {
    ws: Tensor,
}

impl Embedding {
    fn new(path: nn::Path<'_>, rows: i64, d: i64, init: nn::Init) -> Self {
        let config = nn::EmbeddingConfig { ws_init: init, ..Default::default() };
        Embedding { ws: nn::embedding(path, rows, d, config).ws }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        Tensor::embedding(&self.ws, x, -1, false, false)
    }

    fn share(&self) -> Self {
        Embedding { ws: self.ws.shallow_clone() }
    }
}

#[derive(Debug)]
struct Block {
    ln1: LayerNorm,
    qkv: Linear,
    proj: Linear,
    ln2: LayerNorm,
    fc1: Linear,
    fc2: Linear,
}

impl Block {
    fn share(&self) -> Self {
        Block {
            ln1: self.ln1.share(),
            qkv: self.qkv.share(),
            proj: self.proj.share(),
            ln2: self.ln2.share(),
            fc1: self.fc1.share(),
            fc2: self.fc2.share(),
        }
    }
}

/// Per layer, the keys and values of every position so far in buffers of `[B, heads, capacity,
/// d_head]` (allocated at the first write, filled up to `len`); and per position `[B, L]` the
/// writing rank, time and whether it is padding, for the attention bias.
#[derive(Debug)]
pub struct KvCache {
    layers: Vec<(Tensor, Tensor)>,
    len: i64,
    capacity: i64,
    rank: Tensor,
    time: Tensor,
    pad: Tensor,
}

impl KvCache {
    /// The cache of rows `idx` `[N]` of this one (e.g. each prompt once per answer to it).
    #[must_use]
    pub fn select_rows(&self, idx: &Tensor) -> Self {
        let pick = |t: &Tensor| if t.numel() == 0 { t.shallow_clone() } else { t.index_select(0, idx) };
        KvCache {
            layers: self.layers.iter().map(|(k, v)| (pick(k), pick(v))).collect(),
            len: self.len,
            capacity: self.capacity,
            rank: pick(&self.rank),
            time: pick(&self.time),
            pad: pick(&self.pad),
        }
    }
}

/// The input features of a batch of sequences: `[B, L]` each (i64), `moves` `[B, L, 5]`.
#[derive(Debug)]
pub struct Features {
    pub kind: Tensor,
    pub row: Tensor,
    pub col: Tensor,
    pub role: Tensor,
    pub rank: Tensor,
    pub time: Tensor,
    pub dist: Tensor,
    pub moves: Tensor,
}

impl Features {
    /// Packs rows of tokens, right-padded with `PAD` tokens to the longest row.
    #[must_use]
    pub fn pack(layout: &Layout, rows: &[&[Token]]) -> Self {
        Self::pack_padded(layout, rows, false)
    }

    /// Packs rows of tokens, left-padded with `PAD` tokens to the longest row, so that every
    /// row ends at the last column (prompts of different lengths decoded together). Attention
    /// never reads a padding key, and no feature depends on a token's position, so a row's
    /// logits are those of its unpadded self.
    #[must_use]
    pub fn pack_left(layout: &Layout, rows: &[&[Token]]) -> Self {
        Self::pack_padded(layout, rows, true)
    }

    fn pack_padded(layout: &Layout, rows: &[&[Token]], left: bool) -> Self {
        let len = rows.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
        let pad = Token::pad(layout);
        let n = rows.len();
        let mut cols: [Vec<i64>; 7] = std::array::from_fn(|_| Vec::with_capacity(n * len));
        let mut moves = Vec::with_capacity(n * len * 5);
        for r in rows {
            let skip = if left { len - r.len() } else { 0 };
            for i in 0..len {
                let t = i.checked_sub(skip).and_then(|j| r.get(j)).unwrap_or(&pad);
                for (c, v) in cols.iter_mut().zip([t.kind, t.row, t.col, t.role, t.rank, t.time, t.dist]) {
                    c.push(v);
                }
                // Move m with status s is row m · COUNT + s of the moves table.
                moves.extend((0..5).map(|m| m * status::COUNT + t.moves[m as usize]));
            }
        }
        let shape = [n as i64, len as i64];
        let [kind, row, col, role, rank, time, dist] = cols.map(|c| Tensor::from_slice(&c).reshape(shape));
        let moves = Tensor::from_slice(&moves).reshape([n as i64, len as i64, 5]);
        Features { kind, row, col, role, rank, time, dist, moves }
    }
}

/// A batch of teacher-forcing sequences with their prompts shared: the distinct prompts,
/// left-padded, `[P, Lp]`; per sequence the index of its prompt, `rows` `[N]`; the answers'
/// input tokens, right-padded, `[N, La]`; and the targets `[N, 1 + La]` (`-1` where none): of
/// the prompt's last position (`PLAN`), then of each answer position.
///
/// Sequences with the same prompt (a GRPO group's answers) share one row of `prompts`, so the
/// prompt runs through the network once for all of them; its gradient is the sum of theirs.
#[derive(Debug)]
pub struct SeqBatch {
    pub prompts: Features,
    pub rows: Tensor,
    pub answers: Features,
    pub targets: Tensor,
}

impl SeqBatch {
    /// Packs sequences, each distinct prompt once (in order of first appearance).
    #[must_use]
    pub fn pack(layout: &Layout, seqs: &[&Sequence]) -> Self {
        let (prompts, rows) = distinct(seqs.iter().map(|s| &s.tokens[..=s.plan_at]));
        let answers: Vec<&[Token]> = seqs.iter().map(|s| &s.tokens[s.plan_at + 1..]).collect();
        let answers = Features::pack(layout, &answers);
        let width = 1 + answers.kind.size()[1] as usize;
        let mut t = Vec::with_capacity(seqs.len() * width);
        for s in seqs {
            let own = &s.targets[s.plan_at..];
            t.extend_from_slice(own);
            t.extend(std::iter::repeat_n(-1, width - own.len()));
        }
        SeqBatch {
            prompts: Features::pack_left(layout, &prompts),
            rows: Tensor::from_slice(&rows),
            answers,
            targets: Tensor::from_slice(&t).reshape([seqs.len() as i64, width as i64]),
        }
    }
}

/// The distinct rows of token rows, in order of first appearance, and for each row the index
/// of its distinct row (a GRPO group's answers share one prompt).
pub(crate) fn distinct<'a>(rows: impl Iterator<Item = &'a [Token]>) -> (Vec<&'a [Token]>, Vec<i64>) {
    let mut first: std::collections::HashMap<&[Token], i64> = std::collections::HashMap::new();
    let mut out: Vec<&[Token]> = Vec::new();
    let index = rows
        .map(|r| {
            *first.entry(r).or_insert_with(|| {
                out.push(r);
                out.len() as i64 - 1
            })
        })
        .collect();
    (out, index)
}

/// Time relations of the bias: k − q in −2..=2, and "either has no time".
const TIME_RELATIONS: i64 = 6;
/// Agent relations of the bias: same, other, either about none.
const AGENT_RELATIONS: i64 = 3;

/// The relation of every query to every key, `[B, Lq, Lk]`: `agent · TIME_RELATIONS + time`.
fn relations(q_rank: &Tensor, q_time: &Tensor, k_rank: &Tensor, k_time: &Tensor, no_time: i64) -> Tensor {
    let (qr, kr) = (q_rank.unsqueeze(2), k_rank.unsqueeze(1));
    let none = qr.lt(0).logical_or(&kr.lt(0));
    let agent = qr.ne_tensor(&kr).to_kind(Kind::Int64).masked_fill(&none, 2);
    let (qt, kt) = (q_time.unsqueeze(2), k_time.unsqueeze(1));
    let timeless = qt.eq(no_time).logical_or(&kt.eq(no_time));
    let time = (&kt - &qt).clamp(-2, 2).g_add_scalar(2).masked_fill(&timeless, TIME_RELATIONS - 1);
    agent * TIME_RELATIONS + time
}

/// Scaled dot-product attention with an additive mask, `[B, H, Lq, d_head]`, as libtorch's
/// `scaled_dot_product_attention` computes it, to the bit. With a learned mask (training) that
/// function takes its composite path: `q` and `k` each scaled by the root of the scale, the mask
/// added, a softmax that also checks every row for one with no visible key, the values. Here
/// that path runs without the check, which cannot fire (a query always sees itself:
/// [`Policy::bias`]) and cost a few percent of a training step. Without gradients libtorch's
/// fused kernel runs, as before.
fn attention(q: &Tensor, k: &Tensor, v: &Tensor, bias: &Tensor) -> Tensor {
    if !bias.requires_grad() {
        return Tensor::scaled_dot_product_attention::<&Tensor>(q, k, v, Some(bias), 0.0, false, None, false);
    }
    let root = (1.0 / (q.size()[3] as f64).sqrt()).sqrt();
    let mut scores = (q * root).matmul(&(k.transpose(-2, -1) * root));
    let _ = scores.g_add_(bias);
    scores.softmax(-1, Kind::Float).matmul(v)
}

/// The policy network and the variables it lives in.
#[derive(Debug)]
pub struct Policy {
    pub vs: nn::VarStore,
    pub config: ModelConfig,
    /// kind, row, col, role, time, dist, moves.
    emb: [Embedding; 7],
    /// The attention bias per relation and head, shared by every layer.
    relation: Embedding,
    blocks: Vec<Block>,
    ln_f: LayerNorm,
    head: Linear,
}

impl Policy {
    /// A freshly initialised policy on the CPU. Initialisation draws from libtorch's global
    /// generator: seed it first (`tch::manual_seed`) for a reproducible start.
    ///
    /// # Errors
    /// A bad configuration.
    pub fn new(config: &ModelConfig) -> Result<Self, TrainError> {
        config.validate()?;
        let vs = nn::VarStore::new(Device::Cpu);
        let root = vs.root();
        let d = config.d_model;
        let l = &config.layout;
        let small = nn::Init::Randn { mean: 0.0, stdev: 0.02 };
        let emb = [
            Embedding::new(&root / "emb_kind", kind::COUNT, d, small),
            Embedding::new(&root / "emb_row", l.side_table(), d, small),
            Embedding::new(&root / "emb_col", l.side_table(), d, small),
            Embedding::new(&root / "emb_role", role::COUNT, d, small),
            Embedding::new(&root / "emb_time", l.time_table(), d, small),
            Embedding::new(&root / "emb_dist", l.dist_table(), d, small),
            Embedding::new(&root / "emb_moves", 5 * status::COUNT, d, small),
        ];
        let relation = Embedding::new(
            &root / "attn_relation",
            AGENT_RELATIONS * TIME_RELATIONS,
            config.heads,
            nn::Init::Const(0.0),
        );
        let blocks = (0..config.layers)
            .map(|i| {
                let p = &root / format!("block{i}");
                Block {
                    ln1: LayerNorm::new(&p / "ln1", d),
                    qkv: Linear::new(&p / "qkv", d, 3 * d),
                    proj: Linear::new(&p / "proj", d, d),
                    ln2: LayerNorm::new(&p / "ln2", d),
                    fc1: Linear::new(&p / "fc1", d, config.d_ff),
                    fc2: Linear::new(&p / "fc2", config.d_ff, d),
                }
            })
            .collect();
        let ln_f = LayerNorm::new(&root / "ln_f", d);
        let head = Linear::new(&root / "head", d, NUM_OUT);
        Ok(Policy { vs, config: config.clone(), emb, relation, blocks, ln_f, head })
    }

    /// A copy with the same weights (e.g. the frozen reference of GRPO's KL term).
    ///
    /// # Errors
    /// libtorch failures.
    pub fn duplicate(&self) -> Result<Self, TrainError> {
        let mut p = Policy::new(&self.config)?;
        p.vs.copy(&self.vs)?;
        Ok(p)
    }

    /// Another handle on the same variables, not a copy (a step through either moves both), to
    /// run the policy on another thread: a `Policy` may move between threads but not be shared.
    #[must_use]
    pub fn handle(&self) -> Self {
        let mut vs = nn::VarStore::new(Device::Cpu);
        vs.variables_ = std::sync::Arc::clone(&self.vs.variables_);
        Policy {
            vs,
            config: self.config.clone(),
            emb: self.emb.each_ref().map(Embedding::share),
            relation: self.relation.share(),
            blocks: self.blocks.iter().map(Block::share).collect(),
            ln_f: self.ln_f.share(),
            head: self.head.share(),
        }
    }

    /// The variables by name, sorted by name.
    #[must_use]
    pub fn named_variables(&self) -> Vec<(String, Tensor)> {
        let mut v: Vec<(String, Tensor)> = self.vs.variables().into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The variables alone, in [`Policy::named_variables`]'s order (an optimizer's, and the
    /// order gradients taken with `Tensor::run_backward` come back in).
    #[must_use]
    pub fn variables(&self) -> Vec<Tensor> {
        self.named_variables().into_iter().map(|(_, t)| t).collect()
    }

    /// Number of parameters.
    #[must_use]
    pub fn num_parameters(&self) -> i64 {
        self.vs.trainable_variables().iter().map(Tensor::numel).map(|n| n as i64).sum()
    }

    fn embed(&self, f: &Features) -> Tensor {
        let [k, r, c, ro, t, d, m] = &self.emb;
        k.forward(&f.kind)
            + r.forward(&f.row)
            + c.forward(&f.col)
            + ro.forward(&f.role)
            + t.forward(&f.time)
            + d.forward(&f.dist)
            + m.forward(&f.moves).sum_dim_intlist(2, false, Kind::Float)
    }

    /// The additive attention mask `[B, H, Lq, Lk]` of the last `Lq` of `Lk` positions: the
    /// relation bias; `-inf` on padding keys other than the query itself (a query always reads
    /// itself, so no row is empty); and `-inf` above the diagonal when `causal`.
    fn bias(&self, q: (&Tensor, &Tensor), k: (&Tensor, &Tensor), k_pad: &Tensor, causal: bool) -> Tensor {
        let rel = relations(q.0, q.1, k.0, k.1, self.config.layout.no_time());
        let b = self.relation.forward(&rel).permute([0, 3, 1, 2]);
        let (lq, lk) = (q.0.size()[1], k.0.size()[1]);
        let ones = Tensor::ones([lq, lk], (Kind::Bool, Device::Cpu));
        let own = ones.triu(lk - lq).logical_and(&ones.tril(lk - lq));
        let hidden = k_pad.unsqueeze(1).unsqueeze(1).logical_and(&own.logical_not());
        let hidden = if causal { hidden.logical_or(&ones.triu(1 + lk - lq)) } else { hidden };
        b.masked_fill(&hidden, f64::NEG_INFINITY)
    }

    fn heads(&self, x: &Tensor) -> Tensor {
        // [B, L, d] -> [B, H, L, dh]
        let (b, l, _) = x.size3().expect("3-d");
        let h = self.config.heads;
        x.view([b, l, h, self.config.d_model / h]).transpose(1, 2)
    }

    /// The queries, keys and values of `h` `[B, L, d]`, each `[B, H, L, d_head]`.
    fn qkv(&self, blk: &Block, h: &Tensor) -> (Tensor, Tensor, Tensor) {
        let qkv = blk.qkv.forward(h).chunk(3, 2);
        (self.heads(&qkv[0]), self.heads(&qkv[1]), self.heads(&qkv[2]))
    }

    /// The rest of a block on `x` `[B, L, d]` with queries `q` `[B, H, L, d_head]` over keys and
    /// values `k`, `v` `[B, H, Lk, d_head]` (their last `L` are x's own) and the additive mask
    /// `bias` `[B, H, L, Lk]`: attention, projection, MLP, both residuals. With `last_only`, the
    /// output of the last position alone, `[B, 1, d]` (the last block, when nothing reads the
    /// other positions' outputs).
    #[allow(clippy::too_many_arguments)]
    fn finish_block(
        &self,
        blk: &Block,
        x: &Tensor,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        bias: &Tensor,
        last_only: bool,
    ) -> Tensor {
        let l = x.size()[1];
        let (x, q, bias) = if last_only && l > 1 {
            (x.narrow(1, l - 1, 1), q.narrow(2, l - 1, 1), bias.narrow(2, l - 1, 1))
        } else {
            (x.shallow_clone(), q.shallow_clone(), bias.shallow_clone())
        };
        let (b, lq, d) = x.size3().expect("3-d");
        let y = attention(&q, k, v, &bias);
        let x = &x + blk.proj.forward(&y.transpose(1, 2).contiguous().view([b, lq, d]));
        &x + blk.fc2.forward(&blk.fc1.forward(&blk.ln2.forward(&x)).gelu("none"))
    }

    /// The blocks on `x` `[B, L, d]`, writing keys and values into `cache` when given; with
    /// `last_only`, the logits of the last position alone (`[B, 1, NUM_OUT]`).
    fn run(&self, mut x: Tensor, mut cache: Option<&mut KvCache>, bias: &Tensor, last_only: bool) -> Tensor {
        let (b, l, d) = x.size3().expect("3-d");
        let n = self.blocks.len();
        for (i, blk) in self.blocks.iter().enumerate() {
            let (q, mut k, mut v) = self.qkv(blk, &blk.ln1.forward(&x));
            if let Some(c) = cache.as_deref_mut() {
                let (len, capacity) = (c.len, c.capacity);
                let layer = &mut c.layers[i];
                if layer.0.numel() == 0 {
                    let h = self.config.heads;
                    let zeros = || Tensor::zeros([b, h, capacity, d / h], (Kind::Float, Device::Cpu));
                    *layer = (zeros(), zeros());
                }
                layer.0.narrow(2, len, l).copy_(&k);
                layer.1.narrow(2, len, l).copy_(&v);
                k = layer.0.narrow(2, 0, len + l);
                v = layer.1.narrow(2, 0, len + l);
            }
            x = self.finish_block(blk, &x, &q, &k, &v, bias, last_only && i + 1 == n);
        }
        if let Some(c) = cache {
            c.len += l;
        }
        self.head.forward(&self.ln_f.forward(&x))
    }

    /// Logits `[N, 1 + La, NUM_OUT]` of a teacher-forcing batch: at the prompt's last position,
    /// then at every answer position (causal attention; padding is never read by a real
    /// position). Each distinct prompt runs once; the answers read its keys and values. The
    /// prompt's positions other than the last go through the last block's keys and values
    /// only, since nothing reads their outputs.
    pub fn forward(&self, b: &SeqBatch) -> Tensor {
        let (p, a, rows) = (&b.prompts, &b.answers, &b.rows);
        let p_pad = p.kind.eq(kind::PAD);
        let p_bias = self.bias((&p.rank, &p.time), (&p.rank, &p.time), &p_pad, true);
        // Every prompt distinct: the rows are 0..N in order, and no copy is needed.
        let own = p.kind.size()[0] == a.kind.size()[0];
        let pick = |t: &Tensor| if own { t.shallow_clone() } else { t.index_select(0, rows) };
        let keys = |pt: &Tensor, at: &Tensor| Tensor::cat(&[&pick(pt), at], 1);
        let (k_rank, k_time) = (keys(&p.rank, &a.rank), keys(&p.time, &a.time));
        let k_pad = keys(&p_pad, &a.kind.eq(kind::PAD));
        let a_bias = self.bias((&a.rank, &a.time), (&k_rank, &k_time), &k_pad, true);
        let (mut xp, mut xa) = (self.embed(p), self.embed(a));
        let n = self.blocks.len();
        for (i, blk) in self.blocks.iter().enumerate() {
            let (qp, kp, vp) = self.qkv(blk, &blk.ln1.forward(&xp));
            let (qa, ka, va) = self.qkv(blk, &blk.ln1.forward(&xa));
            let k = Tensor::cat(&[&pick(&kp), &ka], 2);
            let v = Tensor::cat(&[&pick(&vp), &va], 2);
            xa = self.finish_block(blk, &xa, &qa, &k, &v, &a_bias, false);
            xp = self.finish_block(blk, &xp, &qp, &kp, &vp, &p_bias, i + 1 == n);
        }
        let x = Tensor::cat(&[&pick(&xp), &xa], 1);
        self.head.forward(&self.ln_f.forward(&x))
    }

    /// Runs prompts `[B, L]` (of one length, or left-padded: [`Features::pack_left`]) and
    /// returns the logits of the last position `[B, NUM_OUT]` and the cache for
    /// [`Policy::step`], with room for `more` further tokens.
    pub fn prefill(&self, f: &Features, more: usize) -> (Tensor, KvCache) {
        let empty = || {
            (Tensor::zeros([0], (Kind::Float, Device::Cpu)), Tensor::zeros([0], (Kind::Float, Device::Cpu)))
        };
        let pad = f.kind.eq(kind::PAD);
        let mut cache = KvCache {
            layers: (0..self.blocks.len()).map(|_| empty()).collect(),
            len: 0,
            capacity: f.kind.size()[1] + more as i64,
            rank: f.rank.shallow_clone(),
            time: f.time.shallow_clone(),
            pad: pad.shallow_clone(),
        };
        let bias = self.bias((&f.rank, &f.time), (&f.rank, &f.time), &pad, true);
        let logits = self.run(self.embed(f), Some(&mut cache), &bias, true);
        (logits.select(1, -1), cache)
    }

    /// Feeds one token per sequence (`[B, 1]` features) and returns the next logits `[B,
    /// NUM_OUT]`.
    ///
    /// # Panics
    /// When the cache is full (more tokens than [`Policy::prefill`] made room for).
    pub fn step(&self, f: &Features, cache: &mut KvCache) -> Tensor {
        assert!(cache.len < cache.capacity, "the key/value cache is full");
        cache.rank = Tensor::cat(&[&cache.rank, &f.rank], 1);
        cache.time = Tensor::cat(&[&cache.time, &f.time], 1);
        cache.pad = Tensor::cat(&[&cache.pad, &f.kind.eq(kind::PAD)], 1);
        let bias = self.bias((&f.rank, &f.time), (&cache.rank, &cache.time), &cache.pad, false);
        self.run(self.embed(f), Some(cache), &bias, false).select(1, -1)
    }
}

/// Log-probabilities of the targets under `logits / temperature`, `[B, L]`, with 0 where the
/// target is `-1`; and the mask of positions with a target (float).
pub fn target_log_probs(logits: &Tensor, targets: &Tensor, temperature: f64) -> (Tensor, Tensor) {
    let logp = (logits / temperature).log_softmax(-1, Kind::Float);
    let mask = targets.ge(0);
    let idx = targets.clamp_min(0).unsqueeze(-1);
    let lp = logp.gather(-1, &idx, false).squeeze_dim(-1) * mask.to_kind(Kind::Float);
    (lp, mask.to_kind(Kind::Float))
}

/// Mean entropy (nats) of `softmax(logits / temperature)` over the masked positions.
#[must_use]
pub fn mean_entropy(logits: &Tensor, mask: &Tensor, temperature: f64) -> f64 {
    tch::no_grad(|| {
        let logp = (logits / temperature).log_softmax(-1, Kind::Float);
        let ent = -(logp.exp() * &logp).sum_dim_intlist(-1, false, Kind::Float);
        let n = mask.sum(Kind::Float).double_value(&[]).max(1.0);
        (ent * mask).sum(Kind::Float).double_value(&[]) / n
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{answer, prompt, sequence, AnswerState, Sequence, Token};
    use floe_core::{Agent, Grid, Instance, Move, Pos};

    fn small() -> ModelConfig {
        ModelConfig { d_model: 16, layers: 2, heads: 2, d_ff: 32, layout: Layout::new(4, 16) }
    }

    /// Two agents crossing a 3x3 map corner to corner, and an answer for them.
    fn crossing(rows: &[&str]) -> (Instance, Vec<i64>) {
        let inst = Instance::new(
            Grid::from_rows(rows).unwrap(),
            vec![
                Agent { start: Pos::new(0, 0), goal: Pos::new(2, 2) },
                Agent { start: Pos::new(2, 0), goal: Pos::new(0, 2) },
            ],
        )
        .unwrap();
        let ans = answer(
            &inst,
            &[vec![Move::Right, Move::Right, Move::Down, Move::Down], vec![Move::Up, Move::Up]],
        );
        (inst, ans)
    }

    /// A handle computes what the policy computes, on another thread, and a gradient taken
    /// through it is one of the policy's variables.
    #[test]
    fn a_handle_is_the_same_policy_on_another_thread() {
        let cfg = ModelConfig { d_model: 16, layers: 1, heads: 2, d_ff: 32, layout: Layout::new(4, 16) };
        let p = crate::test_rng::seeded_policy(&cfg, 3);
        let inst = floe_core::generate(
            &floe_core::GeneratorConfig::default().size(3).agents(2).hole_ratio(0.1).count(1).seed(2),
        )
        .unwrap()
        .remove(0);
        let seq = crate::tokens::sequence(
            &cfg.layout,
            &inst,
            &crate::tokens::answer(&inst, &crate::tokens::optimal_moves(&inst).unwrap()),
        )
        .unwrap();
        let here =
            Vec::<f32>::try_from(p.forward(&SeqBatch::pack(&cfg.layout, &[&seq])).detach().flatten(0, -1))
                .unwrap();
        let (handle, seq2) = (p.handle(), seq.clone());
        let (there, grads) = std::thread::spawn(move || {
            let out = handle.forward(&SeqBatch::pack(&handle.config.layout, &[&seq2]));
            let vars = handle.variables();
            let grads = Tensor::run_backward(&[out.sum(Kind::Float)], &vars, false, false);
            (Vec::<f32>::try_from(out.detach().flatten(0, -1)).unwrap(), grads)
        })
        .join()
        .unwrap();
        assert_eq!(here, there);
        let vars = p.named_variables();
        assert_eq!(grads.len(), vars.len());
        assert!(grads.iter().zip(&vars).all(|(g, (_, v))| g.size() == v.size()));
        // The handle's variables are the policy's: moving one moves the other.
        let h = p.handle();
        let (_, mut w) = h.named_variables().remove(0);
        let _ = tch::no_grad(|| w.fill_(0.25));
        assert_eq!(p.named_variables()[0].1.double_value(&[0, 0]), 0.25);
        assert_eq!(h.head.ws.data_ptr(), p.head.ws.data_ptr());
    }

    #[test]
    fn cached_decoding_matches_the_whole_sequence_forward() {
        let p = crate::test_rng::seeded_policy(&small(), 3);
        let (inst, ans) = crossing(&["FFF", "FHF", "FFF"]);
        let l = p.config.layout;
        let seq = sequence(&l, &inst, &ans).unwrap();
        let batch = SeqBatch::pack(&l, &[&seq]);
        let full = tch::no_grad(|| p.forward(&batch));
        let pr = prompt(&l, &inst).unwrap();
        let (mut logits, mut cache) = tch::no_grad(|| p.prefill(&Features::pack(&l, &[&pr]), ans.len()));
        let mut st = AnswerState::new(l, &inst);
        for (i, &o) in ans.iter().enumerate() {
            let want = full.get(0).get(i as i64);
            let diff = (&logits.get(0) - &want).abs().max().double_value(&[]);
            assert!(diff < 1e-5, "position {i}: {diff}");
            let tok = st.push(o);
            logits = tch::no_grad(|| p.step(&Features::pack(&l, &[&[tok]]), &mut cache));
        }
    }

    #[test]
    fn a_shared_prompt_gives_each_answer_its_own_logits_and_gradient() {
        // Two answers to one board and one to another, packed together (the board's prompt
        // once), against each sequence alone: the same logits, and the same gradient as the sum
        // of the three sequences' losses taken one by one.
        let p = crate::test_rng::seeded_policy(&small(), 6);
        let l = p.config.layout;
        let (inst, ans) = crossing(&["FFF", "FHF", "FFF"]);
        let other =
            answer(&inst, &[vec![Move::Down, Move::Down, Move::Right, Move::Right], vec![Move::Right]]);
        let (inst2, ans2) = crossing(&["FFF", "FFF", "FFF"]);
        let seqs = [
            sequence(&l, &inst, &ans).unwrap(),
            sequence(&l, &inst2, &ans2).unwrap(),
            sequence(&l, &inst, &other).unwrap(),
        ];
        let refs: Vec<&Sequence> = seqs.iter().collect();
        let batch = SeqBatch::pack(&l, &refs);
        assert_eq!(batch.prompts.kind.size()[0], 2, "the first board's prompt once");
        assert_eq!(Vec::<i64>::try_from(&batch.rows).unwrap(), vec![0, 1, 0]);
        let loss = |b: &SeqBatch| {
            let logits = p.forward(b);
            let (lp, _) = target_log_probs(&logits, &b.targets, 1.0);
            (logits, -lp.sum(Kind::Float))
        };
        let grads = |f: &dyn Fn()| {
            for v in p.vs.trainable_variables() {
                let mut g = v.grad();
                if g.defined() {
                    let _ = g.zero_();
                }
            }
            f();
            p.vs.trainable_variables().iter().map(|v| v.grad().copy()).collect::<Vec<Tensor>>()
        };
        let together = grads(&|| loss(&batch).1.backward());
        let alone = grads(&|| {
            for (i, s) in seqs.iter().enumerate() {
                let one = SeqBatch::pack(&l, &[s]);
                let (logits, lo) = loss(&one);
                let all = tch::no_grad(|| p.forward(&batch));
                let n = s.tokens.len() - s.plan_at;
                let diff = (logits.get(0).narrow(0, 0, n as i64) - all.get(i as i64).narrow(0, 0, n as i64))
                    .abs()
                    .max()
                    .double_value(&[]);
                assert!(diff < 1e-5, "sequence {i}: {diff}");
                lo.backward();
            }
        });
        // Float sums in another order: equal to float32's rounding, relative to the gradient's
        // size (a wrong pairing of answers and prompts differs by the gradient's own size).
        for (a, b) in together.iter().zip(&alone) {
            let diff = (a - b).abs().max().double_value(&[]);
            let scale = a.abs().max().double_value(&[]).max(1.0);
            assert!(diff < 1e-4 * scale, "{diff} of {scale}");
        }
        assert!(together.iter().any(|g| g.abs().sum(Kind::Float).double_value(&[]) > 0.0));
    }

    #[test]
    fn left_padding_changes_no_logit() {
        // A 2x2 and a 3x3 prompt decoded together (the first left-padded) give the logits each
        // gives alone, at the prompt and at the next step.
        let p = crate::test_rng::seeded_policy(&small(), 5);
        let l = p.config.layout;
        let a = Instance::new(
            Grid::from_rows(&["FF", "FF"]).unwrap(),
            vec![Agent { start: Pos::new(0, 0), goal: Pos::new(1, 1) }],
        )
        .unwrap();
        let b = Instance::new(
            Grid::from_rows(&["FFF", "FHF", "FFF"]).unwrap(),
            vec![
                Agent { start: Pos::new(0, 0), goal: Pos::new(2, 2) },
                Agent { start: Pos::new(2, 0), goal: Pos::new(0, 2) },
            ],
        )
        .unwrap();
        let (pa, pb) = (prompt(&l, &a).unwrap(), prompt(&l, &b).unwrap());
        let alone = |pr: &[Token], inst: &Instance| {
            let (first, mut c) = tch::no_grad(|| p.prefill(&Features::pack(&l, &[pr]), 2));
            let mut st = AnswerState::new(l, inst);
            let second = tch::no_grad(|| p.step(&Features::pack(&l, &[&[st.push(4)]]), &mut c));
            (first.get(0), second.get(0))
        };
        let (a1, a2) = alone(&pa, &a);
        let (b1, b2) = alone(&pb, &b);
        let (first, mut c) = tch::no_grad(|| p.prefill(&Features::pack_left(&l, &[&pa, &pb]), 2));
        let (mut sa, mut sb) = (AnswerState::new(l, &a), AnswerState::new(l, &b));
        let next = Features::pack(&l, &[&[sa.push(4)], &[sb.push(4)]]);
        let second = tch::no_grad(|| p.step(&next, &mut c));
        for (x, y) in
            [(&first.get(0), &a1), (&first.get(1), &b1), (&second.get(0), &a2), (&second.get(1), &b2)]
        {
            assert!((x - y).abs().max().double_value(&[]) < 1e-5);
        }
    }

    #[test]
    fn attention_is_libtorchs_to_the_bit_forward_and_backward() {
        let _held = crate::test_rng::lock();
        tch::manual_seed(3);
        let (b, h, lq, lk, dh) = (8, 4, 40, 120, 32);
        let q = Tensor::randn([b, h, lq, dh], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let k = Tensor::randn([b, h, lk, dh], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let v = Tensor::randn([b, h, lk, dh], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        // A learned bias, -inf on some keys but never on a whole row (the query's own key).
        let hidden = Tensor::rand([b, 1, lq, lk], (Kind::Float, Device::Cpu)).lt(0.3);
        let own = Tensor::ones([lq, lk], (Kind::Bool, Device::Cpu)).triu(lk - lq).tril(lk - lq);
        let hidden = hidden.logical_and(&own.logical_not());
        let w = Tensor::randn([b, h, lq, lk], (Kind::Float, Device::Cpu)).set_requires_grad(true);
        let bias = (&w * 1.0).masked_fill(&hidden, f64::NEG_INFINITY);
        let ours = attention(&q, &k, &v, &bias);
        let theirs =
            Tensor::scaled_dot_product_attention::<&Tensor>(&q, &k, &v, Some(&bias), 0.0, false, None, false);
        assert!(
            ours.equal(&theirs),
            "forward differs by {}",
            (&ours - &theirs).abs().max().double_value(&[])
        );
        let g = Tensor::randn(ours.size(), (Kind::Float, Device::Cpu));
        let grads =
            |y: &Tensor| Tensor::run_backward(&[(y * &g).sum(Kind::Float)], &[&q, &k, &v, &w], true, false);
        for (a, b) in grads(&ours).iter().zip(grads(&theirs).iter()) {
            assert!(a.equal(b), "a gradient differs by {}", (a - b).abs().max().double_value(&[]));
        }
    }

    #[test]
    fn the_relation_bias_learns() {
        // The bias table starts at zero and gets a gradient through the attention mask.
        let p = crate::test_rng::seeded_policy(&small(), 4);
        let (inst, ans) = crossing(&["FFF", "FFF", "FFF"]);
        let l = p.config.layout;
        let seq = sequence(&l, &inst, &ans).unwrap();
        let b = SeqBatch::pack(&l, &[&seq]);
        let loss =
            p.forward(&b).view([-1, NUM_OUT]).cross_entropy_for_logits(&b.targets.view([-1]).clamp_min(0));
        loss.backward();
        let rel = p.named_variables().into_iter().find(|(n, _)| n == "attn_relation.weight").unwrap().1;
        assert_eq!(rel.size(), vec![18, 2]);
        assert_eq!(rel.abs().sum(Kind::Float).double_value(&[]), 0.0);
        assert!(rel.grad().abs().sum(Kind::Float).double_value(&[]) > 0.0);
    }

    #[test]
    fn log_probs_and_entropy_by_hand() {
        // Two positions, each with two possible outputs (the others at -inf): probabilities
        // (1/4, 3/4) at the first, (1/2, 1/2) at the second.
        let mut v = vec![f32::NEG_INFINITY; 2 * NUM_OUT as usize];
        v[0] = 0.0;
        v[1] = 3f32.ln();
        v[NUM_OUT as usize] = 0.0;
        v[NUM_OUT as usize + 1] = 0.0;
        let logits = Tensor::from_slice(&v).reshape([1, 2, NUM_OUT]);
        let targets = Tensor::from_slice(&[1i64, -1]).reshape([1, 2]);
        let (lp, mask) = target_log_probs(&logits, &targets, 1.0);
        assert!((lp.double_value(&[0, 0]) - 0.75f64.ln()).abs() < 1e-6);
        assert_eq!(lp.double_value(&[0, 1]), 0.0);
        assert_eq!(mask.double_value(&[0, 1]), 0.0);
        let all = Tensor::ones([1, 2], (Kind::Float, Device::Cpu));
        // Finite logits for the entropy (0 · -inf would be NaN): -inf becomes the lowest float.
        let h = mean_entropy(&logits.nan_to_num(0.0, None, None), &all, 1.0);
        let want = (-(0.25f64 * 0.25f64.ln() + 0.75 * 0.75f64.ln()) + 2f64.ln()) / 2.0;
        assert!((h - want).abs() < 1e-5, "{h} vs {want}");
    }
}
