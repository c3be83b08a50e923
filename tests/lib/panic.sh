# Reads a guest kernel panic off a console log, for tests/guest.sh. Source it; it defines
# functions only. tests/host/panic-signature.sh checks it against sample consoles.

# The lines that start a kernel fault report, and the panic line itself. "Oops: " covers
# "Oops: int3", "Oops: general protection fault" and the "Oops: Oops: 0002" that follows a
# NULL pointer dereference's "BUG:" line; \<BUG keeps "DEBUG:" out.
PANIC_FAULT_RE='Oops: |\<BUG: |kernel BUG at |general protection fault|Kernel panic - not syncing'

# panic_verdict LOG: prints what ended the boot whose console is LOG:
#   none           no kernel panic
#   emulator-int3  a panic whose first fault report is "Oops: int3": multi-threaded TCG
#                  racing with the guest patching its own text (sched_ext's static keys, see
#                  vm/run.sh), not a kernel bug; worth booting again
#   other          any other panic: a real kernel failure, never retried
# The first report decides because one fault often brings others after it: an int3 oops
# that follows a NULL dereference is not the emulator's doing.
panic_verdict() {
    local log=$1 first
    grep -aq 'Kernel panic - not syncing' "$log" || { echo none; return; }
    first=$(grep -aE -m 1 "$PANIC_FAULT_RE" "$log")
    case $first in
        *'Oops: int3'*) echo emulator-int3 ;;
        *) echo other ;;
    esac
}

# panic_lines LOG: the fault reports, RIP lines and panic line of LOG (at most 12), enough to
# tell one panic from another in a summary.
panic_lines() {
    grep -aE "$PANIC_FAULT_RE|RIP: " "$1" | head -n 12 || true
}
