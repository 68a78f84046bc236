func.func @f() -> tensor<f32> {
  %0 = "interpreter.run_parallel"() {programs = [[@f]]} : () -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @main() -> tensor<f32> {
  %0 = "interpreter.run_parallel"() {programs = [[@f]]} : () -> tensor<f32>
  return %0 : tensor<f32>
}
