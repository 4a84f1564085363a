//! Host one program on a Unix socket, as `ptybroker serve --socket` does,
//! and drive it from this process too. Clients speak JSON-RPC 2.0, one
//! request per line:
//!
//! ```sh
//! cargo run --example host_server -- /tmp/bash.sock bash &
//! echo '{"jsonrpc":"2.0","method":"pty/read","params":{},"id":1}' | socat - UNIX:/tmp/bash.sock
//! ```
//!
//! It types `echo ready` itself, prints the screen once that appears, then
//! serves until a client sends `pty/kill` or the program exits (or, with
//! `--once`, closes at once).

use std::time::Duration;

use ptybroker::{Endpoint, PtyServer, SessionOptions, Until};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let once = args.iter().any(|a| a == "--once");
    args.retain(|a| a != "--once");
    let (Some(path), Some(cmd)) = (args.first(), args.get(1)) else {
        eprintln!("usage: host_server SOCKET COMMAND [--once]");
        std::process::exit(2);
    };
    let server = PtyServer::bind(Endpoint::unix(path), &SessionOptions::shell(cmd))?;
    println!("listening on {}", server.address());
    let s = server.session();
    s.write("echo ready\r")?;
    let w = s.wait(Until::regex("^ready$")?.or_exit());
    print!("{}", w.screen);
    if !once {
        while server.is_open() && s.running() {
            s.wait(Until::exit().timeout(Duration::from_secs(1)));
        }
    }
    server.close(true)?;
    println!("closed");
    Ok(())
}
