import ChatterdKit

Chatterd.main()
