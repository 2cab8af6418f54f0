-- wrk script: POST /postmaps with the body the iOS app sends (geodata is a JSON array inside a string).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json; charset=utf-8"
wrk.body = '{"name":"bench","message":"Hello from wrk","geodata":"[42.2936,-83.7166,\\"North\\",\\"walking\\"]"}'
