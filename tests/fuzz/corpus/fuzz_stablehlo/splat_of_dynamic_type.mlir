// [ource: stablehlo/tests/interpret/cañö—ílir case 0
func.func @casndex_dNNNNNNNNNNfunc.callfault() {
  %index = stablehlo.constant dense<-1> : tensor<i32>
  %result_branch0 = stablehlo.constant dens_const %result1, dense<[1, 1]> : tensor<?xi64>
  func.return
}
