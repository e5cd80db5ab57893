"""Tiny random-weight models built locally (a causal LM and a LLaVA VLM), for offline demos and tests.

When the Hub cannot be reached, `arab-mm-tasks demo` evaluates this model so the whole
pipeline (dataset -> lm-eval -> per-country scores) still runs end to end. Its scores are
chance-level by construction; it proves the wiring, not a model.

The tokenizer is a byte-level BPE trained on the text it will see (the bundled ArabCulture
sample plus the prompt templates), so Arabic round-trips losslessly with a small vocabulary.
The VLM (`build_tiny_vlm`) is what lets image and frame tasks run through lm-eval's
``hf-multimodal`` and lighteval's ``--vision-model`` on a CPU machine without torchvision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import LlamaConfig, PreTrainedTokenizerFast

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]

IMAGE_TOKEN = "<image>"  # lm-eval's default placeholder too, so its prompts need no mapping
# a user turn is a string or a list of {"type": "text"|"image"} parts (what lm-eval and lighteval send)
VLM_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
VLM_PATCH = 14
VLM_PATCHES_PER_SIDE = 2
VLM_IMAGE_TOKENS = VLM_PATCHES_PER_SIDE**2  # tokens one <image> expands to

GIMMICK_REGIONS = [
    "Arab States",
    "Asian and Pacific States",
    "Eastern European States",
    "Latin-American and Caribbean States",
    "Subsaharian African States",
    "Western European and North American States",
]
GIMMICK_COUNTRIES = [
    *("Algeria", "Bahrain", "Egypt", "Iraq", "Jordan", "Kuwait", "Lebanon", "Mauritania", "Morocco", "Oman"),
    *("Palestine", "Qatar", "Saudi Arabia", "Sudan", "Syria", "Tunisia", "United Arab Emirates", "Yemen"),
    *("China", "India", "Indonesia", "Iran", "Japan", "Korea", "Viet Nam", "Poland", "Russia", "Ukraine"),
    *("Brazil", "Mexico", "Peru", "Nigeria", "Kenya", "Senegal", "France", "Germany", "Spain", "Türkiye"),
]


def train_bpe_tokenizer(
    corpus: Iterable[str],
    *,
    special_tokens: Sequence[str] = SPECIAL_TOKENS,
    chat_template: str = CHAT_TEMPLATE,
    vocab_size: int = 1000,
) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on `corpus`: any text still encodes, and the text it will see stays short.

    ``<|endoftext|>`` is BOS, ``<|im_end|>`` EOS (the chat turn end, so chat-formatted runs stop) and
    ``<pad>`` padding; `special_tokens` take the first ids in order and are never split.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(corpus), trainer=trainer)
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        chat_template=chat_template,
        model_max_length=1024,
    )


def _llama_config(tokenizer: PreTrainedTokenizerFast) -> LlamaConfig:
    """The 2-layer, 64-wide Llama both tiny models share, with the tokenizer's vocabulary and special ids."""
    from transformers import LlamaConfig

    return LlamaConfig(
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


def build_tiny_lm(out_dir: str | Path, corpus: Iterable[str], *, seed: int = 0, vocab_size: int = 1000) -> Path:
    """Train a BPE tokenizer on `corpus`, build a 2-layer Llama with seeded random weights, save both."""
    import torch
    from transformers import LlamaForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_bpe_tokenizer(corpus, vocab_size=vocab_size)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(_llama_config(tokenizer))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def gimmick_corpus() -> list[str]:
    """English text like GIMMICK's prompts (instructions, hints, options): the tiny VLM tokenizer's training text."""
    lines = [
        "What traditional dance are the performers engaging in, as seen in the image?",
        "What festival are the people in the video celebrating?",
        "Answer with a single word or phrase.",
        "Choose from the following options and output only the corresponding letter.",
        "In which of the following countries does the event shown in the images take place?",
        "From which of the following regions does the cultural event or facet with the title `Al-Sadu` originate?",
        "Name the cultural event or facet depicted by the following images. Answer briefly and concisely.",
        "Write a brief essay about the cultural event or facet depicted by the following images.",
        "A. Kuwait\nB. Jordan\nC. Egypt\nD. United Arab Emirates\nYour answer letter: C",
        "Your answer letter:",
        "Your answer:",
        "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n",
    ]
    hint = "Hint: The question is related to a cultural event or facet from the following"
    lines += [f"{hint} region(s): {region}" for region in GIMMICK_REGIONS]
    lines += [f"{hint} country or countries: {country}" for country in GIMMICK_COUNTRIES]
    return lines


def build_tiny_vlm(out_dir: str | Path, corpus: Iterable[str] | None = None, seed: int = 0) -> Path:
    """Build and save a random-weight LLaVA (CLIP tower, the tiny Llama) that `AutoProcessor` and
    `AutoModelForImageTextToText` load, so image tasks run end to end offline on a CPU.

    LLaVA because its processor needs no torchvision (Qwen-VL-style ones require a video processor).
    Images are resized to 28 px, so each ``<image>`` expands to `VLM_IMAGE_TOKENS` tokens. `corpus`
    defaults to `gimmick_corpus`. Decoding is greedy (same output every run) and ``<|im_end|>`` ends it,
    but random weights rarely emit it: runs last max_new_tokens (512 steps take ~0.3 s on one thread).
    """
    import torch
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_bpe_tokenizer(
        gimmick_corpus() if corpus is None else corpus,
        special_tokens=[*SPECIAL_TOKENS, IMAGE_TOKEN],
        chat_template=VLM_CHAT_TEMPLATE,
    )
    side = VLM_PATCH * VLM_PATCHES_PER_SIDE
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessorPil(size={"shortest_edge": side}, crop_size={"height": side, "width": side}),
        tokenizer=tokenizer,
        patch_size=VLM_PATCH,
        vision_feature_select_strategy="default",  # drops CLS: exactly one token per patch
        num_additional_image_tokens=1,  # the CLS the tower emits
        chat_template=VLM_CHAT_TEMPLATE,
        image_token=IMAGE_TOKEN,
    )
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=side,
        patch_size=VLM_PATCH,
        projection_dim=32,
    )
    # untied: with tied random weights the residual stream wins and greedy decoding repeats the prompt's
    # last token forever; after a chat prompt that is "\n", so every answer is cut to "" by a "\n" stop
    text = _llama_config(tokenizer)
    text.tie_word_embeddings = False
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    generation = model.generation_config
    generation.do_sample = False
    generation.bos_token_id = tokenizer.bos_token_id
    generation.eos_token_id = tokenizer.eos_token_id
    generation.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def arabculture_corpus(records: Iterable[dict]) -> list[str]:
    """Every prompt and choice the ArabCulture tasks build from `records`: the tokenizer's training text."""
    from arab_mm_tasks.core.registry import all_specs

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


def build_tiny_bert(
    out_dir: str | Path, corpus: Iterable[str], *, regression: bool = False, seed: int = 0, layers: int = 4
) -> Path:
    """A WordPiece tokenizer trained on `corpus` and a small random BERT: the encoder metrics' test model.

    ``regression=True`` saves a `BertForSequenceClassification` with one output, the shape of the
    ALDi model (`AMR-KELEG/Sentence-ALDi`); otherwise a `BertModel`, the shape of BERTScore's encoders.
    """
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wordpiece = BertWordPieceTokenizer(lowercase=False, strip_accents=False)
    wordpiece.train_from_iterator(list(corpus), vocab_size=500, show_progress=False)
    wordpiece.save_model(str(out))
    tokenizer = BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=False, model_max_length=128)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=2,
        max_position_embeddings=128,
        num_labels=1,
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config) if regression else BertModel(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
