//! The throwaway server starts, stops, comes back on its port, and leaves nothing behind.

use std::net::TcpStream;

use opsbot_tmp_postgres::Server;

fn accepts(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

#[test]
fn a_server_starts_stops_and_starts_again_on_its_port_then_leaves_nothing() {
    let mut server = Server::start().unwrap();
    let port = server.port();
    assert!(accepts(port), "the server accepts connections once started");
    assert_eq!(
        server.url("postgres"),
        format!("postgres://opsbot@127.0.0.1:{port}/postgres")
    );

    server.stop().unwrap();
    assert!(!server.is_running());
    assert!(!accepts(port), "a stopped server refuses connections");

    server.start_again().unwrap();
    assert_eq!(server.port(), port, "it comes back on the same port");
    assert!(accepts(port));

    server.crash().unwrap();
    assert!(!accepts(port));
    server.start_again().unwrap();
    assert!(accepts(port), "it recovers from a crash");

    drop(server);
    assert!(!accepts(port), "a dropped server is stopped");
}

#[test]
fn the_shared_server_is_one_server() {
    let first = opsbot_tmp_postgres::shared().unwrap();
    let second = opsbot_tmp_postgres::shared().unwrap();
    assert_eq!(first.port(), second.port());
    assert!(accepts(first.port()));
}
