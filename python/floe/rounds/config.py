"""The settings of a run of :mod:`floe.rounds` and :mod:`floe.verl`: the protocol's (rounds,
samples, designers, limits, context, validation set, reward), which floe-rounds reads and checks
as ``floe train``'s ``rounds`` and ``validation`` sections (:meth:`RoundsConfig.protocol`), and
the language model's own (its engineer's sampling, TRL's ``GRPOConfig`` arguments), read from
one JSON file.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .._floe import ConfigError, FloeError, default_reward, round0_config, run_settings

#: TRL arguments floe sets for every round unless the configuration's ``trl`` sets them.
TRL_DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 8,
    "num_generations": 4,
    "max_completion_length": 256,
    "learning_rate": 1e-6,
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
}

#: How a warm start's plans may be written (:func:`floe.rounds.trl_trainee.written_plan`).
ANSWERS = ("words", "letters", "coordinates")

#: TRL arguments floe sets itself, per round: they cannot be set in ``trl``.
TRL_OWN = ("output_dir", "num_train_epochs", "seed")


@dataclass
class RoundsConfig:
    """A run's settings. Defaults in brackets."""

    #: Rounds [3], round 0 on ``round0`` and each later one on the engineer's configuration.
    rounds: int = 3
    #: Passes of GRPO over a round's prompts [2] (TRL's ``num_train_epochs``; ``trl.max_steps``
    #: stops a round sooner).
    epochs: int = 2
    #: Training prompts per round [256], shared among map sizes by ``data_ratio``.
    samples: int = 256
    #: The run's seed [1]: round r's prompts come from ``floe.round_seed(seed, r)`` (``floe
    #: train``'s), its GRPO from TRL's seed of the same, the engineer's sampling from floe's seed
    #: of the request.
    seed: int = 1
    #: Round 0's configuration [floe's round-0 default clamped into ``design_limits``].
    round0: Optional[dict] = None
    #: What the engineer may design (``rounds.design_limits`` of ``floe train``) [its defaults].
    design_limits: dict = field(default_factory=dict)
    #: How the engineer's context is assembled (``rounds.context``: ``preset``,
    #: ``training_details``, ``guidelines``, ``template``, ``history_json``) [V6].
    context: Optional[dict] = None
    #: The fixed validation set (``floe train``'s ``validation``: ``sizes``, ``agents``,
    #: ``per_cell``, ``hole_ratio``, ``wait_ratio``, ``seed``) [its defaults].
    validation: dict = field(default_factory=dict)
    #: A curriculum [none]: ``fixed``, ``difficulty-scaling``, ``plr``, ``sec`` or a plugin in
    #: ``curriculum_library``, with ``curriculum_params``. Alone (with ``engineer`` ``fixed``) it
    #: designs every round; beside an engineer it gives round 0 (unless ``round0`` does) and
    #: chooses the replayed instances, as in ``floe train``.
    curriculum: Optional[str] = None
    curriculum_params: Optional[dict] = None
    curriculum_library: Optional[str] = None
    #: Tokens a validation answer may take [TRL's ``max_completion_length``].
    validation_max_tokens: Optional[int] = None
    #: Validation prompts answered in one batch [16].
    eval_batch: int = 16
    #: The reward plugin (a built-in name; ``reward_library`` for a plugin library) [floe-rounds'
    #: default, ``floe train``'s: ``tiered`` without partial credit, :func:`floe.default_reward`],
    #: and its parameters [the default's when ``reward`` is not set, else the plugin's own].
    reward: Optional[str] = None
    reward_params: Optional[dict] = None
    reward_library: Optional[str] = None
    #: A system message before each prompt [none].
    system: Optional[str] = None
    #: The environment engineer [``self``]: ``self`` (the trainee's current checkpoint), ``base``
    #: (the round-0 model), ``fixed`` (none: the curriculum designs every round; without one,
    #: floe's ``fixed`` curriculum keeps round 0's configuration every round, the paper's "GRPO
    #: on a fixed configuration"), an ``http(s)://`` URL (an OpenAI-compatible server,
    #: floe's ``endpoint`` engineer, with the reply's JSON schema as ``response_format``), or a
    #: floe engineer plugin's name (``rules``, ``embedded``, one in ``engineer_library``).
    engineer: str = "self"
    #: Parameters of an endpoint or plugin engineer (for a URL: ``model``, ``api_key_env``, …).
    engineer_params: Optional[dict] = None
    engineer_library: Optional[str] = None
    #: A model engineer's settings: more attempts after an unusable reply [2], tokens a reply
    #: may take [640], sampling temperature [0.7; 0: greedy], and what constrains its tokens
    #: [``schema``: the reply's JSON schema; ``grammar``: floe's GBNF grammar of the same
    #: limits, with decimals of at most two places; ``none``].
    engineer_retries: int = 2
    engineer_max_tokens: int = 640
    engineer_temperature: float = 0.7
    engineer_constraint: str = "schema"
    #: A supervised warm start before round 0 [none]: TRL's ``SFTTrainer`` on the generator's
    #: optimal plans written in the prompt's answer format, the loss on the answer's tokens
    #: only. ``steps``, ``samples`` (instances), ``config`` (their generator configuration
    #: [``round0``, else floe's round-0 default within ``design_limits``]), ``learning_rate``
    #: [1e-4], ``batch_size`` [8], ``answer`` (how its plans are written: ``words``, the
    #: prompt's example [default], ``letters`` or ``coordinates``). Validated after it as the
    #: stage ``warm start``.
    warm_start: Optional[dict] = None
    #: TRL's ``GRPOConfig`` arguments, over :data:`TRL_DEFAULTS` (``output_dir``,
    #: ``num_train_epochs`` and ``seed`` are floe's).
    trl: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Checks the settings floe can check before anything runs.

        Raises :class:`floe.ConfigError` naming the bad field."""
        if self.rounds < 1:
            raise ConfigError("rounds: at least 1")
        if self.epochs < 1 or self.samples < 1 or self.eval_batch < 1:
            raise ConfigError("epochs, samples and eval_batch must be at least 1")
        if self.engineer_constraint not in ("schema", "grammar", "none"):
            raise ConfigError(
                f"engineer_constraint {self.engineer_constraint!r}: one of 'schema', 'grammar', 'none'"
            )
        if self.engineer_max_tokens < 1 or self.engineer_retries < 0 or self.engineer_temperature < 0:
            raise ConfigError("engineer_max_tokens >= 1, engineer_retries >= 0, engineer_temperature >= 0")
        if not self.engineer:
            raise ConfigError("engineer: empty; self, base, fixed, a URL or a plugin name")
        if self.warm_start is not None:
            w = self.warm_start
            unknown = sorted(set(w) - {"steps", "samples", "config", "learning_rate", "batch_size", "answer"})
            if unknown or int(w.get("steps", 0)) < 1 or int(w.get("samples", 0)) < 1 or w.get("answer", "words") not in ANSWERS:
                raise ConfigError(
                    "warm_start: steps and samples (at least 1), and optionally config, learning_rate, "
                    f"batch_size, answer ({', '.join(ANSWERS)}){'; unknown ' + ', '.join(unknown) if unknown else ''}"
                )
        own = sorted(set(self.trl) & set(TRL_OWN))
        if own:
            raise ConfigError(f"trl: {', '.join(own)} are set by floe for each round (epochs, seed)")

    def designs(self) -> bool:
        """Whether an engineer designs the rounds after round 0 (not ``fixed``)."""
        return self.engineer != "fixed"

    def protocol(self, settings: dict) -> dict:
        """The protocol's part of the settings, as floe-rounds reads it (``floe train``'s
        ``rounds`` and ``validation`` sections, the seed), with ``settings`` what the run folder's
        ``config.json`` records. floe-rounds checks it when the run starts."""
        spec = lambda name, params, library: {"name": name, "params": params, "library": library}  # noqa: E731
        curriculum = None
        if self.curriculum is not None:
            curriculum = spec(self.curriculum, self.curriculum_params, self.curriculum_library)
        elif not self.designs():
            fixed = self.round0 if self.round0 is not None else round0_config(limits=self.design_limits)[0]
            curriculum = spec("fixed", {"config": fixed}, None)
        engineer = None
        if self.designs():
            engineer = spec(self.engineer, self.engineer_params, self.engineer_library)
        context = self.context
        if context is None and self.engineer == "rules" and self.engineer_library is None:
            # The built-in `rules` reads the history as JSON.
            context = {"history_json": True}
        rounds = {
            "rounds": self.rounds,
            "epochs": self.epochs,
            "samples": self.samples,
            "curriculum": curriculum,
            "engineer": engineer,
            "design_limits": self.design_limits,
            "round0": self.round0,
            "reward": self.reward_spec(),
        }
        if context is not None:
            rounds["context"] = context
        return {"seed": self.seed, "rounds": rounds, "validation": self.validation, "settings": settings}

    def reward_spec(self) -> dict:
        """The run's reward as a plugin spec (``name``, ``params``, ``library``)."""
        if self.reward is not None:
            return {"name": self.reward, "params": self.reward_params, "library": self.reward_library}
        default = default_reward()
        params = self.reward_params if self.reward_params is not None else default["params"]
        return {"name": default["name"], "params": params, "library": self.reward_library}

    def trl_args(self) -> dict:
        """TRL's arguments as every round uses them, before floe's own per round."""
        return {**TRL_DEFAULTS, **self.trl}

    def max_completion_length(self) -> int:
        """Tokens of a training completion (TRL's ``max_completion_length``)."""
        return int(self.trl_args()["max_completion_length"])

    def to_dict(self) -> dict:
        """The settings as JSON-ready data (``config.json`` of the run folder)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RoundsConfig":
        """Settings from a dict; unknown keys are refused with their names."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown settings: {', '.join(unknown)} (known: {', '.join(sorted(names))})")
        return cls(**data)

    @classmethod
    def from_file(cls, path: str) -> "RoundsConfig":
        """Settings from a JSON file."""
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: {e}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a JSON object of settings, not {type(data).__name__}")
        return cls.from_dict(data)


#: The settings a command-line flag of the same name sets (``python -m floe.rounds``,
#: ``python -m floe.verl``).
FLAG_SETTINGS = ("engineer", "curriculum", "rounds", "epochs", "samples", "seed")


def add_run_flags(parser: Any) -> None:
    """The flags both drivers take besides their own: the engineer, the settings of
    :data:`FLAG_SETTINGS`, and ``--resume``."""
    parser.add_argument("--engineer", help="self (default), base, fixed, an http(s):// URL, or a floe engineer plugin")
    parser.add_argument("--engineer-model", help="with a URL: the model name the server expects")
    parser.add_argument("--curriculum", help="fixed, difficulty-scaling, plr, sec, or a plugin name (beside or instead of the engineer)")
    for key in FLAG_SETTINGS[2:]:
        parser.add_argument(f"--{key}", type=int)
    parser.add_argument("--resume", action="store_true", help="continue the run in --out after its last finished round")


def cli_settings(a: Any, files_given: bool, read: Callable[[], tuple]) -> tuple:
    """``(model folder, RoundsConfig, the trainer's own settings)`` that a driver's flags ask
    for: with ``--resume`` alone (no ``--model``, no file, no other flag) the run folder's own
    (its ``config.json``); else ``read()``'s ``(settings dict, own settings)`` from the files,
    with the flags of :func:`add_run_flags` over them."""
    given = files_given or a.engineer_model is not None or any(getattr(a, k) is not None for k in FLAG_SETTINGS)
    if a.resume and a.model is None and not given:
        saved = run_settings(a.out)
        if saved is not None:
            return saved["model"], RoundsConfig.from_dict(saved["settings"]), saved.get("verl")
    if a.model is None:
        raise ConfigError("--model: required (except with --resume alone, which reads the run's own)")
    data, own = read()
    for key in FLAG_SETTINGS:
        if getattr(a, key) is not None:
            data[key] = getattr(a, key)
    if a.engineer_model is not None:
        data["engineer_params"] = {**(data.get("engineer_params") or {}), "model": a.engineer_model}
    return a.model, RoundsConfig.from_dict(data), own


def cli_main(run: Callable[[], Optional[str]]) -> int:
    """A driver's exit status: ``run()``'s message on standard error and 0, or floe's error and 2."""
    try:
        message = run()
    except FloeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if message:
        print(message, file=sys.stderr)
    return 0
