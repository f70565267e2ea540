// Why this is refused: `unsafe fn` means the caller must uphold a contract, and
// the caller here is a model sending arbitrary arguments. Make the function
// safe and keep any `unsafe` block inside it, where you check its conditions.

use tk::tool;

/// Read a byte at an address.
#[tool]
unsafe fn peek(address: u64) -> u8 {
    unsafe { *(address as *const u8) }
}

fn main() {}
