//! Contract probes on the server: carried by runs (stored, exported, judged), and `/contracts`.

mod page;
mod runs;
