"""``rmqlb simulate``: what-if allocation from flags or from ``--input`` cases (design §3).

The command is glue: it checks the flags and reads the files, asks :mod:`rmqlb.whatif` for
the cases and their numbers and hands them to :mod:`rmqlb.render.simulate`, which lays every
format out from the same blocks.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rmqlb.cli.app import app
from rmqlb.cli.messages import error
from rmqlb.cli.options import (
    Connection,
    Display,
    GroupOption,
    Inputs,
    Output,
    make_console,
    resolve_output,
    shared_options,
)
from rmqlb.errors import ExitCode, InputError
from rmqlb.fileio import InputKind

if TYPE_CHECKING:
    from rmqlb.model.snapshot import MessageRequestMode
    from rmqlb.model.strategy import RoomRule
    from rmqlb.whatif.cases import Case

DEFAULT_QUEUES = 16
DEFAULT_CONSUMERS = 3


@app.command()
@shared_options
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
        str | None,
        typer.Option("--topic", "-t", metavar="NAME", help="Topic name (default TopicTest)."),
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
    broker_assigned: Annotated[
        bool,
        typer.Option(
            "--broker-assigned",
            help="5.x: the broker assigns the queues (clientRebalance=false), in PULL mode: "
            "its QueryAssignmentProcessor, which knows only AVG and AVG_BY_CIRCLE.",
        ),
    ] = False,
    pop_share: Annotated[
        int | None,
        typer.Option(
            "--pop-share",
            metavar="N",
            help="5.x: the broker assigns the queues in POP mode with popShareQueueNum N "
            "(<= 0 or >= consumers - 1: every client pops every queue).",
            show_default=False,
        ),
    ] = None,
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
    connection: Connection = Connection(),
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
    display: Display = Display(),
    inputs: Inputs = Inputs(),
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
      rmqlb simulate --queues 4 --consumers 3 --pop-share 1
      rmqlb simulate --input cases.jsonl --output json
      rmqlb simulate --dump snap.json --group G --add 2 --queues 24
      rmqlb simulate -n 10.0.0.9:9876 --group G --strategy CONSISTENT_HASH
    """
    from rmqlb.render.simulate import one_line, write_simulations
    from rmqlb.whatif.cases import simulate_case

    fmt = resolve_output(display.output)
    explicit_namesrv = bool(connection.namesrv) and not _from_env(ctx, "namesrv")
    if dump is not None or check_config or group or explicit_namesrv:
        from rmqlb.cli.whatif import Source, run_running
        from rmqlb.model.strategy import parse_strategy_spec
        from rmqlb.whatif.running import Changes

        if broker_assigned or pop_share is not None:
            raise InputError(
                "--broker-assigned and --pop-share simulate a group given by flags; rmqlb "
                "explain shows what the brokers assign a running group"
            )
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
            if not connection.namesrv:
                raise InputError(
                    "--group needs a starting point: --dump FILE, -n ADDR (or NAMESRV_ADDR) or "
                    "--check-config FILE"
                )
            live = connection.live(
                groups=tuple(group or ()),
            )
        source = Source(dump, live, tuple(check_config or ()), replicas)
        target = parse_strategy_spec(strategy) if strategy is not None else None
        changes = Changes(add, tuple(add_id or ()), tuple(remove or ()), queues, target, compare)
        return run_running(source, tuple(group or ()), topic, changes, fmt, display.color)
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
        broker_assigned=broker_assigned,
        pop_share=pop_share,
    )
    if input_file is not None:
        from rmqlb.whatif.cases import input_cases

        flags.reject_with_input()
        cases, multi = input_cases(_read_text(input_file, "--input"), f"--input {input_file}")
    else:
        cases, multi = [_case_from_flags(flags)], False
    sims = [
        simulate_case(c, add=add, add_id=flags.add_id, remove=flags.remove, compare=compare)
        for c in cases
    ]
    console = make_console(display.color) if fmt is Output.table else None
    write_simulations(sims, fmt, console, contract=input_file is not None)
    failed = [sim for sim in sims if sim.error is not None]
    if not multi and failed:
        error(one_line(failed[0].error or ""))
        return ExitCode.BAD_INPUT
    invalid = [sim for sim in sims if sim.invalid]
    if invalid:
        first = one_line(invalid[0].error or "")
        error(f"{len(invalid)} of {len(sims)} cases invalid: {first}")
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
    broker_assigned: bool = False
    pop_share: int | None = None

    def broker_mode(self) -> "MessageRequestMode | None":
        """The 5.x broker's request mode when it assigns (``None``: the clients do)."""
        from rmqlb.model.snapshot import MessageRequestMode, RequestMode

        if self.pop_share is not None:
            return MessageRequestMode(RequestMode.POP, self.pop_share)
        return MessageRequestMode(RequestMode.PULL) if self.broker_assigned else None

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
            "--broker-assigned": self.broker_assigned,
            "--pop-share": self.pop_share is not None,
        }
        for name, present in given.items():
            if present:
                raise InputError(
                    f"{name} cannot be combined with --input (each case carries its own "
                    "queues, consumers and strategy)"
                )


def _read_text(path: str, flag: str, kind: InputKind = InputKind.CASES) -> str:
    """The UTF-8 text of input ``path`` (``-``: stdin), read by the one input rule."""
    from rmqlb.fileio import decode_text, read_input

    label = f"{flag} {path}"
    return decode_text(read_input(path, kind, label=label), label)


def _load_data_file(path: str, flag: str) -> Any:
    """JSON (``.json``) or YAML (anything else; YAML also reads JSON)."""
    text = _read_text(path, flag, InputKind.CONFIG)
    if path.lower().endswith(".json"):
        from rmqlb.fileio import load_json

        return load_json(text, f"{flag} {path}")
    import yaml

    from rmqlb.yamlio import safe_load

    try:
        return safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise InputError(f"{flag} {path}: invalid YAML: {exc.problem}{where}") from exc
    except yaml.YAMLError as exc:
        raise InputError(f"{flag} {path}: invalid YAML: {' '.join(str(exc).split())}") from exc


def _room_pattern(pattern: str, flag: str) -> "RoomRule":
    import re

    from rmqlb.model.strategy import RoomPattern

    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:  # a{99999999999}: OverflowError
        raise InputError(f"{flag}: invalid regular expression {pattern!r}: {exc}") from exc
    if compiled.groups < 1:
        raise InputError(f"{flag}: regex {pattern!r} needs a (group) that captures the room")
    return RoomPattern(pattern)


def _rooms_from_file(path: str) -> "tuple[RoomRule | None, RoomRule | None]":
    from rmqlb.whatif.inputs import room_tables

    return room_tables(_load_data_file(path, "--rooms"), f"--rooms {path}")


def _case_from_flags(flags: "_Flags") -> "Case":
    """Check the group flags against each other and read their files; the case itself
    comes from :func:`rmqlb.whatif.cases.flag_case`."""
    from rmqlb.model.strategy import Config, MachineRoomNearby, parse_strategy_spec
    from rmqlb.whatif.cases import flag_case
    from rmqlb.whatif.inputs import DEFAULT_TOPIC, broker_names, config_lists

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
    config = None
    if flags.config is not None:
        raw = _load_data_file(flags.config, "--config")
        config = config_lists(raw, topic, f"--config {flags.config}")

    spec = parse_strategy_spec(flags.strategy or "AVG", broker_rule, consumer_rule, config)
    uses_rooms = flags.broker_room or flags.consumer_room or flags.rooms
    if uses_rooms and not flags.compare and not isinstance(spec, MachineRoomNearby):
        raise InputError(
            "--broker-room, --consumer-room and --rooms are only used by "
            "--strategy MACHINE_ROOM_NEARBY or --compare"
        )
    if config is not None and not flags.compare and not isinstance(spec, Config):
        raise InputError("--config is only used by --strategy CONFIG or --compare")
    broker_mode = flags.broker_mode()
    if broker_mode is not None and flags.compare:
        raise InputError(
            "--compare runs the clients' own strategies: leave out --broker-assigned and "
            "--pop-share"
        )

    consumer_ids: list[str] | None = None
    if flags.consumer_id:
        consumer_ids = list(flags.consumer_id)
    elif flags.consumers is None and isinstance(spec, Config):
        consumer_ids = list(spec.config)  # the clients the lists name
    return flag_case(
        spec,
        topic=topic,
        brokers=flags.broker or broker_names(flags.brokers or 1),
        per_broker=flags.queues or DEFAULT_QUEUES,
        consumer_ids=consumer_ids,
        consumer_count=flags.consumers or DEFAULT_CONSUMERS,
        add=flags.add,
        compare=flags.compare,
        broker_rooms=broker_rule,
        consumer_rooms=consumer_rule,
        config=config,
        broker=broker_mode,
    )
