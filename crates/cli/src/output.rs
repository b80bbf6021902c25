//! Standard output for every command: a line at a time, and a reader that goes away (`pimhe
//! ... | head`) ends the command quietly instead of panicking in `println!`, as a Unix filter
//! would.

use std::io::{ErrorKind, Write};

/// Prints `text` and a newline on standard output.
pub fn line(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        match e.kind() {
            // Nobody reads what follows: stop, as `yes | head` does.
            ErrorKind::BrokenPipe => std::process::exit(0),
            _ => {
                eprintln!("error: cannot write to standard output: {e}");
                std::process::exit(1);
            }
        }
    }
}
