# Reads a guest kernel panic off a console log, for tests/guest.sh. Source it; it defines
# functions only. tests/host/panic-signature.sh checks it against sample consoles.

# The lines that start a kernel fault report, and the panic line itself. "Oops: " covers
# "Oops: int3", "Oops: general protection fault" and the "Oops: Oops: 0002" that follows a
# NULL pointer dereference's "BUG:" line; \<BUG keeps "DEBUG:" out.
PANIC_FAULT_RE='Oops: |\<BUG: |kernel BUG at |general protection fault|Kernel panic - not syncing'

# panic_verdict LOG: prints what the kernel's fault reports in the console LOG come to:
#   none           no kernel panic, and no emulator oops
#   emulator-int3  a first fault report "Oops: int3" in a boot on multi-threaded TCG (the
#                  banner vm/run.sh writes first says "thread=multi"), whether the kernel
#                  panicked or not: the emulator racing with the guest patching its own text
#                  (sched_ext's static keys, see vm/run.sh), not a kernel bug; worth booting
#                  again. Survived, it still spoils the boot: the oops killed the task that hit
#                  it (sched_ext's disable worker, say) and held a CPU for seconds while it
#                  was printed to the serial console (a 1.7 s run-latency outlier was seen).
#                  On one emulator thread (single-threaded TCG, icount) the race cannot
#                  happen: there an int3 oops is the kernel's, like any other fault
#   other          any other panic: a real kernel failure, never retried
# The first report decides because one fault often brings others after it: an int3 oops
# that follows a NULL dereference is not the emulator's doing.
panic_verdict() {
    local log=$1 first
    first=$(grep -aE -m 1 "$PANIC_FAULT_RE" "$log")
    if [[ $first == *'Oops: int3'* ]] && grep -aq '^vm/run: .*thread=multi' "$log"; then
        echo emulator-int3
    elif grep -aq 'Kernel panic - not syncing' "$log"; then
        echo other
    else
        echo none
    fi
}

# panic_lines LOG: the fault reports, RIP lines and panic line of LOG (at most 12), enough to
# tell one panic from another in a summary.
panic_lines() {
    grep -aE "$PANIC_FAULT_RE|RIP: " "$1" | head -n 12 || true
}
