//! The arguments of `./dev up` (`local-stack serve`), read strictly: an
//! argument it does not know is an error, never ignored (`--regions 2` once
//! started one region silently, before it was an argument).

/// What `serve` was asked for.
#[derive(Debug, Default, PartialEq)]
pub struct ServeArgs {
    /// `--limits F`: DynamoDB's partition limits x F, simulated.
    pub limits: Option<f64>,
    /// `--hold MS` (with `--limits`): transactions hold their items this
    /// much longer (a higher rate's hold, at the local rate).
    pub hold_ms: u64,
    /// `--regions N` (1 or 2): with 2, a second region replicated as a
    /// global table's (`regions`), served on `PORT`+1.
    pub regions: u8,
}

impl ServeArgs {
    /// Reads `args` (after `serve`).
    pub fn parse(args: &[String]) -> Result<ServeArgs, String> {
        let mut out = ServeArgs { regions: 1, ..ServeArgs::default() };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--limits" => {
                    let factor = args.next().and_then(|f| f.parse::<f64>().ok()).filter(|f| *f > 0.0 && *f <= 1.0);
                    out.limits = Some(factor.ok_or("--limits needs a factor in (0, 1], such as 0.001")?);
                }
                "--hold" => {
                    let ms = args.next().and_then(|m| m.parse::<u64>().ok()).filter(|m| *m <= 10_000);
                    out.hold_ms = ms.ok_or("--hold needs milliseconds, 0 to 10000")?;
                }
                "--regions" => {
                    let n = args.next().and_then(|n| n.parse::<u8>().ok()).filter(|n| (1..=2).contains(n));
                    out.regions = n.ok_or("--regions needs 1 or 2")?;
                }
                other => {
                    return Err(format!(
                        "./dev up: unknown argument `{other}` (it takes --limits F [--hold MS], or --regions 2)"
                    ))
                }
            }
        }
        if out.regions > 1 && out.limits.is_some() {
            return Err("--regions 2 does not go with --limits (one simulation at a time)".to_owned());
        }
        if out.hold_ms > 0 && out.limits.is_none() {
            return Err("--hold goes with --limits F (the simulation holds the items)".to_owned());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ServeArgs, String> {
        ServeArgs::parse(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn an_unknown_argument_is_refused_not_ignored() {
        let one = |limits, hold_ms| ServeArgs { limits, hold_ms, regions: 1 };
        assert_eq!(parse(&[]), Ok(one(None, 0)));
        assert_eq!(parse(&["--limits", "0.5"]), Ok(one(Some(0.5), 0)));
        assert_eq!(parse(&["--limits", "0.5", "--hold", "250"]), Ok(one(Some(0.5), 250)));
        assert_eq!(parse(&["--regions", "2"]), Ok(ServeArgs { limits: None, hold_ms: 0, regions: 2 }));
        assert!(parse(&["--hold", "250"]).is_err(), "a hold without the simulation");
        assert!(parse(&["--region", "2"]).is_err_and(|e| e.contains("`--region`")));
        assert!(parse(&["--regions", "3"]).is_err());
        assert!(parse(&["--regions", "2", "--limits", "0.5"]).is_err());
        assert!(parse(&["--limits", "2"]).is_err());
        assert!(parse(&["--limits"]).is_err());
        assert!(parse(&["--limits", "0.5", "extra"]).is_err());
    }
}
