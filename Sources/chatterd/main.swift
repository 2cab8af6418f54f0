import ChattAPI
import ChattStore
import HTTPCore
import HTTPServer

print("chatterd")
