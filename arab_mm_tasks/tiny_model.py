"""A tiny random-weight causal LM built locally, for offline demos and tests.

When the Hub cannot be reached, `arab-mm-tasks demo` evaluates this model so the whole
pipeline (dataset -> lm-eval -> per-country scores) still runs end to end. Its scores are
chance-level by construction; it proves the wiring, not a model.

The tokenizer is a byte-level BPE trained on the text it will see (the bundled ArabCulture
sample plus the prompt templates), so Arabic round-trips losslessly with a small vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]


def build_tiny_lm(out_dir: str | Path, corpus: Iterable[str], *, seed: int = 0, vocab_size: int = 1000) -> Path:
    """Train a BPE tokenizer on `corpus`, build a 2-layer Llama with seeded random weights, save both."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(corpus), trainer=trainer)
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        chat_template=CHAT_TEMPLATE,
        model_max_length=1024,
    )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def arabculture_corpus(records: Iterable[dict]) -> list[str]:
    """Every prompt and choice the ArabCulture tasks build from `records`: the tokenizer's training text."""
    from arab_mm_tasks.registry import all_specs

    records = list(records)
    corpus: list[str] = []
    for spec in all_specs().values():
        if spec.benchmark != "arabculture":
            continue
        for record in records:
            request = spec.render(record)
            corpus.append(request.query)
            corpus.extend(request.choices)
    return corpus
