"""A case: the arguments of one `pimhe` command, the CSV file it reads, and what a correct CLI
does with it. The CLI fuzzer generates them (cli/); the study fuzzer runs each step of a
scenario as one."""

from dataclasses import dataclass, field

INPUT = "{input}"  # placeholder in a case's argv for its CSV file
I64_MAX = 2**63 - 1
# The light mix (--light, Case.light) caps what makes a case slow, so that 10^5 cases fit in
# under an hour on two cores: at most LIGHT_ROWS rows or users, means at N = 4096 and half the
# products at 8192 (and the capacity datasets), and the emulator only at N <= 2048 in demos and
# for BGV-level bench ops. The default mix keeps them all.
LIGHT_ROWS = 40


@dataclass
class Expect:
    """What a correct CLI does with a case."""

    problems: list = field(default_factory=list)  # malformed input: must be refused, status 2
    limits: list = field(default_factory=list)  # out of range / too large: may be refused, status 2
    lenient: list = field(default_factory=list)  # may be refused with status 1 or 2
    must_succeed: bool = False  # valid and small: any refusal is a defect
    oracle: dict = None  # how to check the output of a successful run


@dataclass
class Case:
    index: int
    argv: list  # arguments after the binary; INPUT stands for the CSV file
    csv: bytes = None
    expect: Expect = field(default_factory=Expect)
    # Scales the chance of each invalid or limit flag value: 0 in most cases, so that most
    # cases reach the computation instead of stopping at the first bad flag.
    mischief: float = 0.0
    light: bool = False  # a case of the light mix
