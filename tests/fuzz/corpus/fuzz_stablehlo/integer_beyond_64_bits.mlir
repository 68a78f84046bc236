// source: stablehlo/tests/interwhilepret/dot_general.mlir case 1
func.func @dgt_general_op_teSt_algorithm() {
  %lhs = stablehlo.constant dense<[[[2, 2], [3, 4]],
                                   [[52222222222222222222222222222222222222222222222222222222222222222222222222222222222222222, 6], [7, 8]]]> : tensor<2x2x2xi64>
  %rhs = stablehlo.constant dense<[[[1, 0], [0, 1]],
                                           [[5, 6], [7, 8]]]> : tensor<2x2x2xi64>
  func.return
}
