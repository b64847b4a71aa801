;; The host-only module: answers without reading the payload, so that an evaluation costs only
;; what the host pays (instantiation, serialising the payload, reading the answer). bench/instructions
;; subtracts it to count what a guest's own work costs.
(module
  (import "wapc" "__guest_response" (func $response (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"accepted\":true}")
  (data (i32.const 32) "{\"valid\":true}")
  ;; `validate_settings` is the only operation whose name is 17 bytes long; anything else is
  ;; answered as `validate`.
  (func (export "__guest_call") (param $operation i32) (param $payload i32) (result i32)
    (if (i32.eq (local.get $operation) (i32.const 17))
      (then (call $response (i32.const 32) (i32.const 14)))
      (else (call $response (i32.const 0) (i32.const 17))))
    (i32.const 1)))
