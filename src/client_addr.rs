//! The address a request comes from: the peer, or, when the peer is a proxy the configuration
//! trusts, the client address those proxies recorded in `X-Forwarded-For`.

use ipnet::IpNet;
use serde::Deserialize;
use std::net::IpAddr;
use std::str::FromStr;

/// Addresses and networks (`10.0.0.0/8`, `127.0.0.1`, `fd00::/8`) whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct TrustedProxies(Vec<IpNet>);

impl TryFrom<Vec<String>> for TrustedProxies {
    type Error = String;
    fn try_from(items: Vec<String>) -> Result<Self, String> {
        items.iter().map(|s| parse_net(s)).collect::<Result<_, _>>().map(TrustedProxies)
    }
}

impl FromStr for TrustedProxies {
    type Err = String;
    /// A comma-separated list, as the environment gives it.
    fn from_str(s: &str) -> Result<Self, String> {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(parse_net)
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }
}

fn parse_net(s: &str) -> Result<IpNet, String> {
    let s = s.trim();
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{s:?} is not an IP address or network (such as 10.0.0.0/8)"))
}

impl TrustedProxies {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `addr` is one of the proxies.
    pub fn trusts(&self, addr: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&addr))
    }

    /// Whether the request came over TLS as the proxies in front of us say: the last
    /// `X-Forwarded-Proto` (`forwarded_proto`, the header's values in order) is `https` and `peer` is
    /// a proxy we trust. From anyone else the header proves nothing.
    pub fn forwarded_https<'a>(&self, peer: IpAddr, forwarded_proto: impl IntoIterator<Item = &'a str>) -> bool {
        let last = forwarded_proto.into_iter().flat_map(|v| v.split(',')).map(str::trim).last();
        self.trusts(peer) && last.is_some_and(|p| p.eq_ignore_ascii_case("https"))
    }

    /// The client behind `peer`. Each trusted proxy appends the address it was connected from to
    /// `X-Forwarded-For`, so the list is read from the right, past our own proxies, to the first
    /// address none of them is: what comes before it was written by the client and proves nothing.
    /// `forwarded_for` holds the header's values in the order they came.
    pub fn client<'a>(&self, peer: IpAddr, forwarded_for: impl IntoIterator<Item = &'a str>) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let hops: Vec<&str> = forwarded_for.into_iter().flat_map(|v| v.split(',')).map(str::trim).collect();
        let mut client = peer;
        for hop in hops.iter().rev() {
            let Ok(addr) = hop.parse::<IpAddr>() else { break };
            client = addr;
            if !self.trusts(addr) {
                break;
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn tls_is_believed_only_from_a_trusted_proxy_and_the_last_word_counts() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        assert!(proxies.forwarded_https(ip("10.1.2.3"), ["https"]));
        assert!(proxies.forwarded_https(ip("10.1.2.3"), ["http, https"]));
        assert!(!proxies.forwarded_https(ip("10.1.2.3"), ["https, http"]), "our proxy's hop is the last");
        assert!(!proxies.forwarded_https(ip("192.0.2.7"), ["https"]), "anyone can write the header");
        assert!(!proxies.forwarded_https(ip("10.1.2.3"), std::iter::empty()));
    }

    #[test]
    fn forwarded_addresses_count_only_from_trusted_proxies() {
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("10.0.0.1"), ["203.0.113.9"]), ip("10.0.0.1"));
        let proxies: TrustedProxies = "10.0.0.0/8, 127.0.0.1".parse().unwrap();
        assert_eq!(proxies.client(ip("198.51.100.1"), ["203.0.113.9"]), ip("198.51.100.1"), "not a proxy of ours");
        assert_eq!(proxies.client(ip("127.0.0.1"), ["203.0.113.9"]), ip("203.0.113.9"));
        assert_eq!(proxies.client(ip("127.0.0.1"), ["1.1.1.1, 203.0.113.9", "10.1.1.1"]), ip("203.0.113.9"));
        assert_eq!(proxies.client(ip("127.0.0.1"), ["10.2.2.2, 10.1.1.1"]), ip("10.2.2.2"), "all ours: the first");
        assert_eq!(proxies.client(ip("127.0.0.1"), ["junk"]), ip("127.0.0.1"), "nothing readable: the peer");
        assert_eq!(proxies.client(ip("127.0.0.1"), ["1.1.1.1, junk, 10.1.1.1"]), ip("10.1.1.1"));
        assert_eq!(proxies.client(ip("127.0.0.1"), []), ip("127.0.0.1"));
        assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
        assert!("proxy.example".parse::<TrustedProxies>().is_err());
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
    }
}
