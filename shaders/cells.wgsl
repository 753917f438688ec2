// The cell table of the step and verification kernels: what the CPU's per-cell scratch holds
// (core/src/rules.rs `Occupancy`, core/src/engine/cpu/soft.rs), for the cells one environment's
// (or one plan's) agents touch in a step, so that finding who else is on a cell is O(1)
// expected and a step's collision checks O(k), not a comparison of every pair of agents.
//
// An open-addressing hash table in private memory, with linear probing: TABLE slots (a power of
// two, the host's `cell_table_size`, at least four times MAX_K), of which a step uses at most
// 2·k (each agent's cell and its target), so it is never more than half full and a probe always
// ends. Private memory starts zeroed in every invocation: a kernel that fills the table more
// than once (verification, once per time step) clears the slots it used (`cell_clear`).

// 1 + the cell of each slot; 0 for a free slot.
var<private> t_key: array<u32, TABLE>;
// 1 + the agent on the slot's cell at the step's start; 0 for none.
var<private> t_here: array<u32, TABLE>;
// What steps onto the slot's cell, as the kernel keeps it (strict: 1 + the first agent whose
// step ends there; soft: the movers that target it, counted from bit 16, and 1 + the last one).
var<private> t_in: array<u32, TABLE>;

// The slot of `cell`, taken for it if it has none yet (Fibonacci hashing of the cell).
fn cell_slot(cell: u32) -> u32 {
    let key = cell + 1u;
    var i = (cell * 0x9e3779b1u) >> TABLE_SHIFT;
    loop {
        let k = t_key[i];
        if (k == key) { return i; }
        if (k == 0u) {
            t_key[i] = key;
            return i;
        }
        i = (i + 1u) & (TABLE - 1u);
    }
    return i;
}

// Frees a slot `cell_slot` gave (all of a step's slots are freed together, so probing for the
// cells still in the table never meets a hole).
fn cell_clear(slot: u32) {
    t_key[slot] = 0u;
    t_here[slot] = 0u;
    t_in[slot] = 0u;
}
