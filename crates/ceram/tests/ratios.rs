//! Prints the modeled ratios of Tables 3 and 4 (no assertion on their values: they are the
//! model's output, compared with the paper in docs/PIM.md, never fitted).

use pimhe_ceram::model::CeramModel;
use pimhe_ceram::params::Params;
use pimhe_ceram::program::HomOp;

#[test]
fn print_table_3_and_4_ratios() {
    let m = CeramModel::default();
    let price = |op, p: &Params| m.price_op(op, p).unwrap();
    for (name, mk) in [("A", Params::case_a as fn(bool) -> Params), ("B", Params::case_b), ("C", Params::case_c)] {
        for op in [HomOp::Multiply, HomOp::Decrypt, HomOp::Encrypt] {
            let with = price(op, &mk(true));
            let without = price(op, &mk(false));
            println!(
                "table3 case {name} {:9} wo/transfer {:8.2}x actual {:8.2}x spec {:8.2}x  (ntt {:.3e} s, schoolbook {:.3e} s)",
                op.name(),
                without.compute_s / with.compute_s,
                without.total_actual_s() / with.total_actual_s(),
                without.total_specified_s() / with.total_specified_s(),
                with.compute_s,
                without.compute_s
            );
        }
    }
    for (name, mk) in [("B", Params::case_b as fn(bool) -> Params), ("C", Params::case_c)] {
        for op in HomOp::ALL {
            // Table 4 compares the cases without NTT on both sides ("not including NTT").
            let a = price(op, &Params::case_a(false));
            let x = price(op, &mk(false));
            println!(
                "table4 case {name} {:9} none {:7.2}x actual {:6.2}x spec {:6.2}x",
                op.name(),
                a.compute_s / x.compute_s,
                a.total_actual_s() / x.total_actual_s(),
                a.total_specified_s() / x.total_specified_s()
            );
        }
    }
    let a = price(HomOp::Multiply, &Params::case_a(true));
    println!("case A multiply: {:?}", a.compute_by_step_s);
    let b = price(HomOp::Multiply, &Params::case_b(true));
    println!("case B multiply: {:?}", b.compute_by_step_s);
    let tb = price(HomOp::Multiply, &Params::textbook(1 << 14, 438));
    let fa = price(HomOp::Multiply, &Params::case_a(false));
    println!("table2 case A (full-RNS wo NTT vs textbook) {:.2}x", tb.total_actual_s() / fa.total_actual_s());
}
