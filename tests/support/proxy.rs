//! A TCP proxy in front of the test DynamoDB Local that can be cut and
//! mended: a region lost and back (docs/regions.md). While cut it drops
//! every connection, open or new, so a client is refused at once.

use std::sync::Arc;

use tokio::sync::watch;

/// The switch of a [`cuttable`] proxy.
#[derive(Clone)]
pub struct Switch(Arc<watch::Sender<bool>>);

impl Switch {
    /// Cuts (`true`) or mends (`false`) the connection.
    pub fn cut(&self, cut: bool) {
        self.0.send_replace(cut);
    }
}

/// A proxy to the test emulator: its URL and its switch.
pub async fn cuttable() -> (String, Switch) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let upstream = crate::endpoint().trim_start_matches("http://").to_owned();
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            if *rx.borrow() {
                drop(client);
                continue;
            }
            let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else { continue };
            let mut cut = rx.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                    _ = cut.wait_for(|c| *c) => {}
                }
            });
        }
    });
    (format!("http://{addr}"), Switch(Arc::new(tx)))
}
