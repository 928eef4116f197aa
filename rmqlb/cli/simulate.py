"""``rmqlb simulate``: what-if allocation from flags or from ``--input`` cases (design §3).

The command is glue: it reads flags and files into cases, asks
:mod:`rmqlb.allocate.whatif` for the numbers and hands them to :mod:`rmqlb.render.simulate`,
which lays every format out from the same blocks.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rmqlb.cli.app import app
from rmqlb.cli.messages import error
from rmqlb.cli.options import (
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_TIMEOUT,
    AccessKeyOption,
    ColorOption,
    DeadlineOption,
    GroupOption,
    MaxInFlightOption,
    NamesrvOption,
    Output,
    OutputOption,
    SecretKeyOption,
    TimeoutOption,
    TlsCaOption,
    TlsCertOption,
    TlsInsecureOption,
    TlsKeyOption,
    TlsOption,
    make_console,
    resolve_output,
)
from rmqlb.errors import AllocationError, ExitCode, InputError
from rmqlb.humanize import plural

if TYPE_CHECKING:
    from rmqlb.allocate.whatif import WhatIf
    from rmqlb.model.queue import MessageQueue
    from rmqlb.model.strategy import RoomRule, StrategySpec

DEFAULT_QUEUES = 16
DEFAULT_CONSUMERS = 3


@app.command()
def simulate(  # noqa: PLR0917  (one parameter per flag, as typer wants)
    ctx: typer.Context,
    queues: Annotated[
        int | None,
        typer.Option(
            "--queues",
            min=1,
            metavar="N",
            help=f"Queues per broker (default {DEFAULT_QUEUES}); from a running group: the "
            "step to N queues on each of its brokers.",
        ),
    ] = None,
    brokers: Annotated[
        int | None,
        typer.Option(
            "--brokers", min=1, metavar="N", help="Number of brokers: broker-a, broker-b, ..."
        ),
    ] = None,
    broker: Annotated[
        list[str] | None,
        typer.Option("--broker", metavar="NAME", help="A broker by name (repeatable)."),
    ] = None,
    consumers: Annotated[
        int | None,
        typer.Option(
            "--consumers",
            min=1,
            metavar="N",
            help=f"Number of consumers, named 10.0.0.1@consumer-N (default {DEFAULT_CONSUMERS}).",
        ),
    ] = None,
    consumer_id: Annotated[
        list[str] | None,
        typer.Option("--consumer-id", metavar="ID", help="A consumer by client id (repeatable)."),
    ] = None,
    topic: Annotated[
        str | None, typer.Option("--topic", metavar="NAME", help="Topic name (default TopicTest).")
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy",
            metavar="SPEC",
            help="AVG, AVG_BY_CIRCLE, CONSISTENT_HASH[:vnodes=N], MACHINE_ROOM:idcs=a,b, "
            "MACHINE_ROOM_NEARBY[:inner=SPEC] or CONFIG (default AVG).",
        ),
    ] = None,
    broker_room: Annotated[
        str | None,
        typer.Option(
            "--broker-room",
            metavar="REGEX",
            help="MACHINE_ROOM_NEARBY: the room of a broker is the regex's first group.",
        ),
    ] = None,
    consumer_room: Annotated[
        str | None,
        typer.Option(
            "--consumer-room",
            metavar="REGEX",
            help="MACHINE_ROOM_NEARBY: the room of a client id is the regex's first group.",
        ),
    ] = None,
    rooms: Annotated[
        str | None,
        typer.Option(
            "--rooms",
            metavar="FILE",
            help="MACHINE_ROOM_NEARBY: JSON/YAML {brokers: {name: room}, consumers: {id: room}}.",
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help='CONFIG: JSON/YAML mapping client id -> queues ("broker-a:3" or '
            "{brokerName, queueId}).",
        ),
    ] = None,
    add: Annotated[
        int, typer.Option("--add", min=0, metavar="N", help="Scale event: N consumers join.")
    ] = 0,
    add_id: Annotated[
        list[str] | None,
        typer.Option("--add-id", metavar="ID", help="Scale event: this client id joins."),
    ] = None,
    remove: Annotated[
        list[str] | None,
        typer.Option("--remove", metavar="ID", help="Scale event: this consumer leaves."),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare", help="Compare strategies: balance and queues moved on +1 / -1 consumer."
        ),
    ] = False,
    input_file: Annotated[
        str | None,
        typer.Option(
            "--input",
            metavar="FILE",
            help=(
                "Cases from a JSON object, a JSON array or JSON Lines; '-' reads standard "
                "input (docs/simulate.md)."
            ),
        ),
    ] = None,
    dump: Annotated[
        str | None,
        typer.Option(
            "--dump",
            "-d",
            metavar="FILE",
            help="Start from a running group of this snapshot ('-' reads stdin).",
            show_default=False,
        ),
    ] = None,
    namesrv: NamesrvOption = None,
    group: GroupOption = None,
    check_config: Annotated[
        list[str] | None,
        typer.Option(
            "--check-config",
            metavar="FILE",
            help="Start from a group declared in rmqlb check inputs (repeatable).",
            show_default=False,
        ),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option(
            "--replicas",
            min=0,
            metavar="N",
            help="With --check-config: the group at N consumers (default: its maximum).",
            show_default=False,
        ),
    ] = None,
    output: OutputOption = None,
    color: ColorOption = None,
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    deadline: DeadlineOption = None,
    max_in_flight: MaxInFlightOption = DEFAULT_MAX_IN_FLIGHT,
    tls: TlsOption = False,
    tls_insecure: TlsInsecureOption = False,
    tls_ca: TlsCaOption = None,
    tls_cert: TlsCertOption = None,
    tls_key: TlsKeyOption = None,
    access_key: AccessKeyOption = None,
    secret_key: SecretKeyOption = None,
) -> int:
    """Show how a strategy splits queues among consumers, what a scale event moves, and how
    the strategies compare; or, from a running group (--dump, -n with --group, or
    --check-config), what adding consumers, changing the queue count or switching strategy
    would do, step by step, with the queues each step moves.

    \b
    Examples:
      rmqlb simulate --queues 16 --consumers 3
      rmqlb simulate --brokers 2 --queues 8 --consumers 4 --add 1
      rmqlb simulate --queues 16 --consumers 5 --compare
      rmqlb simulate --input cases.jsonl --output json
      rmqlb simulate --dump snap.json --group G --add 2 --queues 24
      rmqlb simulate -n 10.0.0.9:9876 --group G --strategy CONSISTENT_HASH
    """
    from rmqlb.render.simulate import Simulation, write_simulations

    fmt = resolve_output(output)
    explicit_namesrv = bool(namesrv) and not _from_env(ctx, "namesrv")
    if dump is not None or check_config or group or explicit_namesrv:
        from rmqlb.cli.live import LiveOptions
        from rmqlb.cli.whatif import Changes, Source, run_running

        _reject_with_running(
            input_file=input_file,
            brokers=brokers,
            broker=broker,
            consumers=consumers,
            consumer_id=consumer_id,
            rooms=(broker_room, consumer_room, rooms),
            config=config,
        )
        if sum((dump is not None, bool(check_config), explicit_namesrv)) > 1:
            raise InputError("give one starting point: --dump FILE, -n ADDR or --check-config FILE")
        live = None
        if dump is None and not check_config:
            if not namesrv:
                raise InputError(
                    "--group needs a starting point: --dump FILE, -n ADDR (or NAMESRV_ADDR) or "
                    "--check-config FILE"
                )
            live = LiveOptions(
                namesrv=namesrv,
                groups=tuple(group or ()),
                timeout=timeout,
                deadline=deadline,
                max_in_flight=max_in_flight,
                tls=tls,
                tls_insecure=tls_insecure,
                tls_ca=tls_ca,
                tls_cert=tls_cert,
                tls_key=tls_key,
                access_key=access_key,
                secret_key=secret_key,
            )
        source = Source(dump, live, tuple(check_config or ()), replicas)
        changes = Changes(add, tuple(add_id or ()), tuple(remove or ()), queues, strategy, compare)
        return run_running(source, tuple(group or ()), topic, changes, fmt, color)
    if replicas is not None:
        raise InputError("--replicas picks a consumer count of a --check-config group")
    flags = _Flags(
        queues=queues,
        brokers=brokers,
        broker=list(broker or ()),
        consumers=consumers,
        consumer_id=list(consumer_id or ()),
        topic=topic,
        strategy=strategy,
        broker_room=broker_room,
        consumer_room=consumer_room,
        rooms=rooms,
        config=config,
        add=add,
        add_id=list(add_id or ()),
        remove=list(remove or ()),
        compare=compare,
    )
    if input_file is not None:
        flags.reject_with_input()
        cases, multi = _cases_from_file(input_file)
    else:
        cases, multi = [_case_from_flags(flags)], False
    outcomes = [_run(case, flags) for case in cases]
    sims = [Simulation(o.case.label, o.case.id, o.result, o.error, o.joiner) for o in outcomes]
    write_simulations(sims, fmt, make_console(color) if fmt is Output.table else None)
    failed = [o for o in outcomes if o.error is not None]
    if not multi and failed:
        error(_one_line(failed[0].error or ""))
        return ExitCode.BAD_INPUT
    invalid = [o for o in outcomes if o.invalid]
    if invalid:
        first = _one_line(invalid[0].error or "")
        error(f"{len(invalid)} of {len(outcomes)} cases invalid: {first}")
        return ExitCode.BAD_INPUT
    return ExitCode.OK


# --------------------------------------------------------------------------- a running group


def _from_env(ctx: typer.Context, name: str) -> bool:
    """Whether option ``name`` came from the environment rather than the command line."""
    from typer._click.core import ParameterSource

    return ctx.get_parameter_source(name) is ParameterSource.ENVIRONMENT


def _reject_with_running(
    *,
    input_file: str | None,
    brokers: int | None,
    broker: list[str] | None,
    consumers: int | None,
    consumer_id: list[str] | None,
    rooms: tuple[str | None, ...],
    config: str | None,
) -> None:
    """Flags that build a group from scratch make no sense for a running one."""
    given = {
        "--input": input_file is not None,
        "--brokers": brokers is not None,
        "--broker": bool(broker),
        "--consumers": consumers is not None,
        "--consumer-id": bool(consumer_id),
        "--broker-room/--consumer-room/--rooms": any(r is not None for r in rooms),
        "--config": config is not None,
    }
    for name, present in given.items():
        if present:
            raise InputError(
                f"{name} cannot be combined with --dump, -n/--group or --check-config: the "
                "running group brings its own brokers, consumers and strategy (use --add, "
                "--add-id, --remove, --queues and --strategy for the what-if)"
            )


# --------------------------------------------------------------------------- flags and files


@dataclass
class _Flags:
    queues: int | None
    brokers: int | None
    broker: list[str]
    consumers: int | None
    consumer_id: list[str]
    topic: str | None
    strategy: str | None
    broker_room: str | None
    consumer_room: str | None
    rooms: str | None
    config: str | None
    add: int
    add_id: list[str]
    remove: list[str]
    compare: bool

    def reject_with_input(self) -> None:
        """``--input`` cases carry queues, consumers and strategy themselves."""
        given = {
            "--queues": self.queues is not None,
            "--brokers": self.brokers is not None,
            "--broker": bool(self.broker),
            "--consumers": self.consumers is not None,
            "--consumer-id": bool(self.consumer_id),
            "--topic": self.topic is not None,
            "--strategy": self.strategy is not None,
            "--broker-room": self.broker_room is not None,
            "--consumer-room": self.consumer_room is not None,
            "--rooms": self.rooms is not None,
            "--config": self.config is not None,
        }
        for name, present in given.items():
            if present:
                raise InputError(
                    f"{name} cannot be combined with --input (each case carries its own "
                    "queues, consumers and strategy)"
                )


@dataclass
class _Case:
    """One group to simulate, or the reason it cannot be read."""

    id: str | None
    label: str
    strategy: StrategySpec | None = None
    queues: list[MessageQueue] = field(default_factory=list)
    consumers: list[str] = field(default_factory=list)
    id_width: int | None = None
    compare_with: list[StrategySpec] | None = None
    error: str | None = None


@dataclass
class _Outcome:
    case: _Case
    result: WhatIf | None = None
    error: str | None = None
    invalid: bool = False  # bad input (exit 2) rather than a Java exception
    joiner: str | None = None  # the id --compare adds for "+1"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read_text(path: str, flag: str) -> str:
    if path == "-":
        try:
            return sys.stdin.read()
        except UnicodeDecodeError as exc:
            raise InputError(f"{flag} -: standard input is not UTF-8 text") from exc
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{flag} {path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{flag} {path}: not UTF-8 text") from exc


def _load_data_file(path: str, flag: str) -> Any:
    """JSON (``.json``) or YAML (anything else; YAML also reads JSON)."""
    text = _read_text(path, flag)
    if path.lower().endswith(".json"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{flag} {path}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from exc
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise InputError(f"{flag} {path}: invalid YAML: {exc.problem}{where}") from exc
    except yaml.YAMLError as exc:
        raise InputError(f"{flag} {path}: invalid YAML: {_one_line(str(exc))}") from exc


def _room_pattern(pattern: str, flag: str) -> RoomRule:
    import re

    from rmqlb.model.strategy import RoomPattern

    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:  # a{99999999999}: OverflowError
        raise InputError(f"{flag}: invalid regular expression {pattern!r}: {exc}") from exc
    if compiled.groups < 1:
        raise InputError(f"{flag}: regex {pattern!r} needs a (group) that captures the room")
    return RoomPattern(pattern)


def _rooms_from_file(path: str) -> tuple[RoomRule | None, RoomRule | None]:
    from rmqlb.model.strategy import RoomTable

    raw = _load_data_file(path, "--rooms")
    if not isinstance(raw, Mapping):
        raise InputError(f"--rooms {path}: expected {{brokers: {{name: room}}, consumers: ...}}")
    unknown = set(raw) - {"brokers", "consumers"}
    if unknown:
        raise InputError(
            f"--rooms {path}: unknown key {sorted(map(str, unknown))[0]!r} "
            "(expected brokers and consumers)"
        )
    out: list[RoomRule | None] = []
    for key in ("brokers", "consumers"):
        table = raw.get(key)
        if table is None:
            out.append(None)
            continue
        if not isinstance(table, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in table.items()
        ):
            raise InputError(f"--rooms {path}: {key}: expected a mapping of names to room names")
        out.append(RoomTable(dict(table)))
    return out[0], out[1]


def _config_from_file(path: str, topic: str) -> dict[str, tuple[MessageQueue, ...]]:
    from rmqlb.model.queue import MessageQueue

    raw = _load_data_file(path, "--config")
    if not isinstance(raw, Mapping) or not raw:
        raise InputError(f"--config {path}: expected a mapping of client id -> list of queues")
    config: dict[str, tuple[MessageQueue, ...]] = {}
    for cid, items in raw.items():
        if not isinstance(cid, str):
            raise InputError(f"--config {path}: client id {cid!r} is not a string")
        if not isinstance(items, list):
            raise InputError(f"--config {path}: {cid}: expected a list of queues")
        queues: list[MessageQueue] = []
        for i, item in enumerate(items):
            where = f"--config {path}: {cid}[{i}]"
            if isinstance(item, str):
                name, sep, qid = item.rpartition(":")
                if not sep or not name or not qid.strip().isdigit():
                    raise InputError(f"{where}: expected 'broker:queueId', got {item!r}")
                queues.append(MessageQueue(topic, name, int(qid)))
            elif isinstance(item, Mapping):
                broker, qid_raw = item.get("brokerName"), item.get("queueId")
                q_topic = item.get("topic", topic)
                if (
                    not isinstance(broker, str)
                    or isinstance(qid_raw, bool)
                    or not isinstance(qid_raw, int)
                    or not isinstance(q_topic, str)
                ):
                    raise InputError(f"{where}: expected {{brokerName: str, queueId: int}}")
                queues.append(MessageQueue(q_topic, broker, qid_raw))
            else:
                raise InputError(f"{where}: expected 'broker:queueId' or {{brokerName, queueId}}")
        config[cid] = tuple(queues)
    return config


def _case_from_flags(flags: _Flags) -> _Case:
    from rmqlb.allocate.whatif import (
        DEFAULT_TOPIC,
        broker_names,
        compare_candidates,
        default_consumer_ids,
        id_width,
        make_queues,
    )
    from rmqlb.model.strategy import Config, MachineRoomNearby, describe, parse_strategy_spec

    if flags.brokers is not None and flags.broker:
        raise InputError("use either --brokers N or --broker NAME, not both")
    if flags.consumers is not None and flags.consumer_id:
        raise InputError("use either --consumers N or --consumer-id ID, not both")
    topic = flags.topic if flags.topic is not None else DEFAULT_TOPIC
    if not topic:
        raise InputError("--topic cannot be empty")

    broker_rule = _room_pattern(flags.broker_room, "--broker-room") if flags.broker_room else None
    consumer_rule = (
        _room_pattern(flags.consumer_room, "--consumer-room") if flags.consumer_room else None
    )
    if flags.rooms is not None:
        file_brokers, file_consumers = _rooms_from_file(flags.rooms)
        broker_rule = broker_rule or file_brokers
        consumer_rule = consumer_rule or file_consumers
    config = _config_from_file(flags.config, topic) if flags.config is not None else None

    spec = parse_strategy_spec(flags.strategy or "AVG", broker_rule, consumer_rule, config)
    uses_rooms = flags.broker_room or flags.consumer_room or flags.rooms
    if uses_rooms and not flags.compare and not isinstance(spec, MachineRoomNearby):
        raise InputError(
            "--broker-room, --consumer-room and --rooms are only used by "
            "--strategy MACHINE_ROOM_NEARBY or --compare"
        )
    if config is not None and not flags.compare and not isinstance(spec, Config):
        raise InputError("--config is only used by --strategy CONFIG or --compare")

    brokers = flags.broker or broker_names(flags.brokers or 1)
    queues = make_queues(topic, brokers, flags.queues or DEFAULT_QUEUES)

    width: int | None = None
    if flags.consumer_id:
        consumers = list(flags.consumer_id)
    elif flags.consumers is None and isinstance(spec, Config):
        consumers = list(spec.config)
    else:
        count = flags.consumers or DEFAULT_CONSUMERS
        # Wide enough for every id this run generates, so Java order stays numeric order.
        width = id_width(count + flags.add + int(flags.compare) - 1)
        consumers = default_consumer_ids(count, width=width)

    compare_with = (
        compare_candidates(spec, broker_rule, consumer_rule, config) if flags.compare else None
    )
    label = (
        f"{topic}: {plural(len(queues), 'queue')} on {plural(len(brokers), 'broker')}, "
        f"{plural(len(consumers), 'consumer')}, {describe(spec)}"
    )
    return _Case(None, label, spec, queues, consumers, width, compare_with)


def _cases_from_file(path: str) -> tuple[list[_Case], bool]:
    """Read a JSON object (one case), a JSON array or JSON Lines (several cases)."""
    text = _read_text(path, "--input")
    if not text.strip():
        raise InputError(f"--input {path}: empty file")
    items: list[tuple[str, Any]]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"line {number}: $", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"--input {path}: line {number}: invalid JSON: {exc.msg} (column {exc.colno})"
                ) from exc
        multi = True
    else:
        if isinstance(doc, list):
            items = [(f"$[{i}]", raw) for i, raw in enumerate(doc)]
            multi = True
        else:
            items = [("$", doc)]
            multi = False
    if not items:
        raise InputError(f"--input {path}: no cases")
    return [_case_from_json(raw, where) for where, raw in items], multi


def _case_from_json(raw: Any, where: str) -> _Case:
    from rmqlb.allocate.cases import case_from_json
    from rmqlb.allocate.whatif import compare_candidates
    from rmqlb.model.strategy import Config, MachineRoomNearby, describe

    raw_id = raw.get("id") if isinstance(raw, Mapping) else None
    case_id = (
        str(raw_id) if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    )
    try:
        case = case_from_json(raw, where)
    except InputError as exc:
        return _Case(case_id, f"case {case_id}" if case_id else where, error=str(exc))
    spec = case.strategy
    nearby = spec if isinstance(spec, MachineRoomNearby) else None
    config = spec.config if isinstance(spec, Config) else None
    compare_with = compare_candidates(
        spec,
        nearby.broker_rooms if nearby else None,
        nearby.consumer_rooms if nearby else None,
        config,
    )
    brokers = len({q.broker_name for q in case.queues})
    label = (
        f"{'case ' + case.id + ': ' if case.id is not None else ''}{case.topic}: "
        f"{plural(len(case.queues), 'queue')} on {plural(brokers, 'broker')}, "
        f"{plural(len(case.consumers), 'consumer')}, {describe(spec)}"
    )
    return _Case(case.id, label, spec, list(case.queues), list(case.consumers), None, compare_with)


def _run(case: _Case, flags: _Flags) -> _Outcome:
    from rmqlb.allocate.whatif import new_consumer_ids, what_if

    if case.error is not None or case.strategy is None:
        return _Outcome(case, error=case.error, invalid=True)
    try:
        joining = new_consumer_ids(case.consumers, flags.add, case.id_width) + flags.add_id
        joiner = new_consumer_ids(case.consumers, 1, case.id_width)[0]
        result = what_if(
            case.strategy,
            case.queues,
            case.consumers,
            add=joining,
            remove=flags.remove,
            compare_with=case.compare_with if flags.compare else None,
            joiner=joiner,
        )
    except AllocationError as exc:
        return _Outcome(case, error=exc.message)
    except InputError as exc:
        return _Outcome(case, error=str(exc), invalid=True)
    return _Outcome(case, result, joiner=joiner)
