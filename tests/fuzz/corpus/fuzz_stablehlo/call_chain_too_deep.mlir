func.func @f0() -> tensor<f32> {
  %0 = func.call @f1() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f1() -> tensor<f32> {
  %0 = func.call @f2() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f2() -> tensor<f32> {
  %0 = func.call @f3() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f3() -> tensor<f32> {
  %0 = func.call @f4() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f4() -> tensor<f32> {
  %0 = func.call @f5() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f5() -> tensor<f32> {
  %0 = func.call @f6() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f6() -> tensor<f32> {
  %0 = func.call @f7() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f7() -> tensor<f32> {
  %0 = func.call @f8() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f8() -> tensor<f32> {
  %0 = func.call @f9() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f9() -> tensor<f32> {
  %0 = func.call @f10() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f10() -> tensor<f32> {
  %0 = func.call @f11() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f11() -> tensor<f32> {
  %0 = func.call @f12() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f12() -> tensor<f32> {
  %0 = func.call @f13() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f13() -> tensor<f32> {
  %0 = func.call @f14() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f14() -> tensor<f32> {
  %0 = func.call @f15() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f15() -> tensor<f32> {
  %0 = func.call @f16() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f16() -> tensor<f32> {
  %0 = func.call @f17() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f17() -> tensor<f32> {
  %0 = func.call @f18() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f18() -> tensor<f32> {
  %0 = func.call @f19() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f19() -> tensor<f32> {
  %0 = func.call @f20() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f20() -> tensor<f32> {
  %0 = func.call @f21() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f21() -> tensor<f32> {
  %0 = func.call @f22() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f22() -> tensor<f32> {
  %0 = func.call @f23() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f23() -> tensor<f32> {
  %0 = func.call @f24() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f24() -> tensor<f32> {
  %0 = func.call @f25() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f25() -> tensor<f32> {
  %0 = func.call @f26() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f26() -> tensor<f32> {
  %0 = func.call @f27() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f27() -> tensor<f32> {
  %0 = func.call @f28() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f28() -> tensor<f32> {
  %0 = func.call @f29() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f29() -> tensor<f32> {
  %0 = func.call @f30() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f30() -> tensor<f32> {
  %0 = func.call @f31() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f31() -> tensor<f32> {
  %0 = func.call @f32() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f32() -> tensor<f32> {
  %0 = func.call @f33() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f33() -> tensor<f32> {
  %0 = func.call @f34() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f34() -> tensor<f32> {
  %0 = func.call @f35() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f35() -> tensor<f32> {
  %0 = func.call @f36() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f36() -> tensor<f32> {
  %0 = func.call @f37() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f37() -> tensor<f32> {
  %0 = func.call @f38() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f38() -> tensor<f32> {
  %0 = func.call @f39() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f39() -> tensor<f32> {
  %0 = func.call @f40() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f40() -> tensor<f32> {
  %0 = func.call @f41() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f41() -> tensor<f32> {
  %0 = func.call @f42() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f42() -> tensor<f32> {
  %0 = func.call @f43() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f43() -> tensor<f32> {
  %0 = func.call @f44() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f44() -> tensor<f32> {
  %0 = func.call @f45() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f45() -> tensor<f32> {
  %0 = func.call @f46() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f46() -> tensor<f32> {
  %0 = func.call @f47() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f47() -> tensor<f32> {
  %0 = func.call @f48() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f48() -> tensor<f32> {
  %0 = func.call @f49() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f49() -> tensor<f32> {
  %0 = func.call @f50() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f50() -> tensor<f32> {
  %0 = func.call @f51() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f51() -> tensor<f32> {
  %0 = func.call @f52() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f52() -> tensor<f32> {
  %0 = func.call @f53() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f53() -> tensor<f32> {
  %0 = func.call @f54() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f54() -> tensor<f32> {
  %0 = func.call @f55() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f55() -> tensor<f32> {
  %0 = func.call @f56() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f56() -> tensor<f32> {
  %0 = func.call @f57() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f57() -> tensor<f32> {
  %0 = func.call @f58() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f58() -> tensor<f32> {
  %0 = func.call @f59() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f59() -> tensor<f32> {
  %0 = func.call @f60() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f60() -> tensor<f32> {
  %0 = func.call @f61() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f61() -> tensor<f32> {
  %0 = func.call @f62() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f62() -> tensor<f32> {
  %0 = func.call @f63() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f63() -> tensor<f32> {
  %0 = func.call @f64() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f64() -> tensor<f32> {
  %0 = func.call @f65() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f65() -> tensor<f32> {
  %0 = func.call @f66() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f66() -> tensor<f32> {
  %0 = func.call @f67() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f67() -> tensor<f32> {
  %0 = func.call @f68() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f68() -> tensor<f32> {
  %0 = func.call @f69() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f69() -> tensor<f32> {
  %0 = func.call @f70() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f70() -> tensor<f32> {
  %0 = func.call @f71() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f71() -> tensor<f32> {
  %0 = func.call @f72() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f72() -> tensor<f32> {
  %0 = func.call @f73() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f73() -> tensor<f32> {
  %0 = func.call @f74() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f74() -> tensor<f32> {
  %0 = func.call @f75() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f75() -> tensor<f32> {
  %0 = func.call @f76() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f76() -> tensor<f32> {
  %0 = func.call @f77() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f77() -> tensor<f32> {
  %0 = func.call @f78() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f78() -> tensor<f32> {
  %0 = func.call @f79() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f79() -> tensor<f32> {
  %0 = func.call @f80() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f80() -> tensor<f32> {
  %0 = func.call @f81() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f81() -> tensor<f32> {
  %0 = func.call @f82() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f82() -> tensor<f32> {
  %0 = func.call @f83() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f83() -> tensor<f32> {
  %0 = func.call @f84() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f84() -> tensor<f32> {
  %0 = func.call @f85() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f85() -> tensor<f32> {
  %0 = func.call @f86() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f86() -> tensor<f32> {
  %0 = func.call @f87() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f87() -> tensor<f32> {
  %0 = func.call @f88() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f88() -> tensor<f32> {
  %0 = func.call @f89() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f89() -> tensor<f32> {
  %0 = func.call @f90() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f90() -> tensor<f32> {
  %0 = func.call @f91() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f91() -> tensor<f32> {
  %0 = func.call @f92() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f92() -> tensor<f32> {
  %0 = func.call @f93() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f93() -> tensor<f32> {
  %0 = func.call @f94() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f94() -> tensor<f32> {
  %0 = func.call @f95() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f95() -> tensor<f32> {
  %0 = func.call @f96() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f96() -> tensor<f32> {
  %0 = func.call @f97() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f97() -> tensor<f32> {
  %0 = func.call @f98() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f98() -> tensor<f32> {
  %0 = func.call @f99() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f99() -> tensor<f32> {
  %0 = func.call @f100() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f100() -> tensor<f32> {
  %0 = func.call @f101() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f101() -> tensor<f32> {
  %0 = func.call @f102() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f102() -> tensor<f32> {
  %0 = func.call @f103() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f103() -> tensor<f32> {
  %0 = func.call @f104() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f104() -> tensor<f32> {
  %0 = func.call @f105() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f105() -> tensor<f32> {
  %0 = func.call @f106() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f106() -> tensor<f32> {
  %0 = func.call @f107() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f107() -> tensor<f32> {
  %0 = func.call @f108() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f108() -> tensor<f32> {
  %0 = func.call @f109() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f109() -> tensor<f32> {
  %0 = func.call @f110() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f110() -> tensor<f32> {
  %0 = func.call @f111() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f111() -> tensor<f32> {
  %0 = func.call @f112() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f112() -> tensor<f32> {
  %0 = func.call @f113() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f113() -> tensor<f32> {
  %0 = func.call @f114() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f114() -> tensor<f32> {
  %0 = func.call @f115() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f115() -> tensor<f32> {
  %0 = func.call @f116() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f116() -> tensor<f32> {
  %0 = func.call @f117() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f117() -> tensor<f32> {
  %0 = func.call @f118() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f118() -> tensor<f32> {
  %0 = func.call @f119() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f119() -> tensor<f32> {
  %0 = func.call @f120() : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @f120() -> tensor<f32> {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  return %0 : tensor<f32>
}
func.func @main() -> tensor<f32> {
  %0 = func.call @f0() : () -> tensor<f32>
  return %0 : tensor<f32>
}
