#![cfg(target_arch = "wasm32")]
//! Hostile test guest: tries to open a TCP connection.

aura_zoo::hostile!(Socket, |call| {
    let found = match std::net::TcpStream::connect("127.0.0.1:22") {
        Ok(_) => "CONNECTED".to_string(),
        Err(error) => format!("denied: {error}"),
    };
    aura_zoo::report(&found)
});
